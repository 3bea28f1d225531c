// Package yamlfile is the one strict YAML decoder of agentbox's own files:
// the policy (agentbox.yaml) and the gateway's config (YAML or JSON). It
// reads a file into a Go struct and refuses, naming file, line and dotted
// field path:
//
//   - a key the struct does not declare, listing the keys known there;
//   - a value of the wrong shape, in words ("expected a list of strings,
//     got \"HOME\""), never a Go type;
//   - a key given twice in one mapping;
//   - a second YAML document (a '---' separator);
//   - aliases (*name) and merge keys (<<): every value is written out where
//     it is used, so a file cannot make the decoder expand one value many
//     times, and what a field holds is what its line says.
//
// An empty file, or one holding only comments or null, decodes to the zero
// value. A null field value is the field's zero value. Decode returns the
// line of every field it read (Lines), so that a caller's own validation
// can name the line of a value it rejects.
//
// The walk checks the file against the struct before anything is decoded:
// it descends only as deep as the Go type does, so the file's nesting does
// not bound its cost. Fields are named by their yaml tags, as
// go.yaml.in/yaml/v3 names them (an untagged field by its lowercased name;
// ",inline" structs are flattened; inline maps are not supported, and their
// keys are refused as unknown). A type can describe its own shape for
// messages by implementing Shaper.
package yamlfile
