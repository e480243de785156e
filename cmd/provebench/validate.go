package main

import (
	"github.com/spf13/cobra"

	"github.com/provebench/provebench/scenarios"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILES...",
		Short: "Check scenario files and list every problem",
		Long: `validate loads scenario files as run would and reports every problem it finds,
one per line as file:line:col: field.path: message. It exits 2 if there is any,
0 otherwise, printing the configurations the files define.`,
		Example: "  provebench validate scenarios/*.yaml",
		Args:    minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			specs, err := loadSpecs(args)
			if err != nil {
				return usageError{err}
			}
			scenarios.PrintValid(cmd.OutOrStdout(), specs)
			return nil
		},
	}
}

func newSchemaCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the scenario format",
		Long: `schema prints a JSON Schema (draft 2020-12) of the scenario format, for editor
completion and validation, e.g. with the YAML language server:

  # yaml-language-server: $schema=provebench-scenarios.schema.json`,
		Example: "  provebench schema > provebench-scenarios.schema.json",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(scenarios.Schema())
			return err
		},
	}
}
