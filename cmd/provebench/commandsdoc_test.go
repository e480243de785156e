package main

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/spf13/cobra"
)

// commandsDoc is docs/commands.md: every command's --help, as the binary
// prints it, so that the reference is the commands' own and never drifts.
const commandsDoc = "../../docs/commands.md"

// renderCommands writes each visible command's help under a heading of its
// own, depth first in the order provebench --help lists them.
func renderCommands(root *cobra.Command) []byte {
	var b bytes.Buffer
	b.WriteString("# provebench commands\n\n")
	b.WriteString("Each command's `--help`, as `bin/provebench CMD --help` prints it.\n")
	b.WriteString("Generated: `PROVEBENCH_UPDATE_DOCS=1 go test ./cmd/provebench -run TestCommandsDoc`\n")
	b.WriteString("(the test fails while this file differs from the binary's help).\n")
	b.WriteString("The narrative reference is [reference.md](reference.md).\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		var h bytes.Buffer
		c.SetOut(&h)
		c.SetErr(&h)
		_ = c.Help()
		fmt.Fprintf(&b, "\n## %s\n\n```text\n%s```\n", c.CommandPath(), h.String())
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return b.Bytes()
}

// Issue 41, item 1: the per-command reference is generated from the
// commands' own help (the key cache's default shown as the path it stands
// for, not this machine's home).
func TestCommandsDoc(t *testing.T) {
	t.Setenv("PROVEBENCH_CACHE", "~/.cache/provebench/keys")
	got := renderCommands(newRoot())
	if os.Getenv("PROVEBENCH_UPDATE_DOCS") != "" {
		if err := os.WriteFile(commandsDoc, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(commandsDoc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the commands' help: regenerate it with PROVEBENCH_UPDATE_DOCS=1 go test ./cmd/provebench -run TestCommandsDoc", commandsDoc)
	}
}
