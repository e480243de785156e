// Package results is the versioned document a run writes (results.json.gz
// or results.json) and everything downstream reads: reports, compare,
// predict, history, CI. It depends on nothing else in provebench, so
// readers need only this package.
//
// One way to write an output folder, one way to find a document in it:
// Folder writes what every command that writes a document leaves (run,
// merge, simulate, ab's sides: the document in the chosen format and not
// the other, results.csv, results.bench, the manifest run --overwrite
// reads; folder.go), and Find, through InDir, is how every command that
// takes "a document or its folder" finds it, refusing a folder that holds
// both formats (indir.go).
//
// One record of a configuration, two decoders by layer: Scenario.Spec is
// spec.Spec as JSON. A reader that plays the configuration again and may
// link the engine (predict) decodes it whole with spec.Spec's own decoder;
// every other reader (reports, which may import only this package and
// internal/; compare's diff of two configurations; predict's identity of a
// configuration across documents) reads SpecView, the settings by dotted
// path and the few fields they name, decoded once by Scenario.DecodeSpec
// (specview.go). The view keeps settings this build does not know, which a
// diff or an identity must see.
package results
