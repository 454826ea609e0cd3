package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// loadFile applies a YAML config file: a mapping whose keys are flag names
// with _ for - (the yaml tags of sidecar.Config), whose values are what
// the flag takes, a list for the comma-separated ones:
//
//	upstream: wss://thalex.com/ws/api/v2
//	queue_bytes: 4MiB
//	allowed_origins: [http://localhost:3000]
//
// An unknown key, a key given twice or a bad value is an error naming the
// file, the line and the key.
func (o *options) loadFile(fs *flag.FlagSet, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	var doc yaml.Node
	if err := yaml.NewDecoder(f).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file
		}
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if len(doc.Content) == 0 {
		return nil // comments only
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("config file %s line %d: want a mapping of settings (key: value)", path, root.Line)
	}
	seen := make(map[string]bool)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		where := fmt.Sprintf("%s (%s line %d)", k.Value, path, k.Line)
		name := strings.ReplaceAll(k.Value, "_", "-")
		fl := fs.Lookup(name)
		if fl == nil || notFromEnvOrFile[name] || fileKey(name) != k.Value {
			if guess, ok := nearest(k.Value, fileKeys(fs)); ok {
				return fmt.Errorf("unknown setting %s: did you mean %s?", where, guess)
			}
			return fmt.Errorf("unknown setting %s (the keys are the flags' names with _ for -; see sidecar -h)", where)
		}
		if seen[name] {
			return fmt.Errorf("setting %s given twice", where)
		}
		seen[name] = true
		s, err := scalarOrList(v)
		if err != nil {
			return fmt.Errorf("invalid value for %s: %w", where, err)
		}
		if v.Tag == "!!null" {
			continue // "token:" with nothing after it keeps the default
		}
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			s = yamlBool(s) // YAML's yes, no, on, off
		}
		if err := fl.Value.Set(s); err != nil {
			return fmt.Errorf("invalid value %q for %s: %w", shownValue(name, s), where, err)
		}
		o.source[name] = where
	}
	return nil
}

// fileKeys are the keys a config file takes.
func fileKeys(fs *flag.FlagSet) []string {
	var keys []string
	fs.VisitAll(func(f *flag.Flag) {
		if !notFromEnvOrFile[f.Name] {
			keys = append(keys, fileKey(f.Name))
		}
	})
	return keys
}

// yamlBool reads YAML 1.1's other spellings of a boolean (yes, no, on,
// off, y, n) as the flag package's true and false; anything else passes
// unchanged for the flag to judge.
func yamlBool(s string) string {
	switch strings.ToLower(s) {
	case "yes", "y", "on":
		return "true"
	case "no", "n", "off":
		return "false"
	}
	return s
}

// scalarOrList returns a scalar's text, or a list of scalars joined with
// commas as the list flags take them.
func scalarOrList(n *yaml.Node) (string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value, nil
	case yaml.SequenceNode:
		items := make([]string, len(n.Content))
		for i, e := range n.Content {
			if e.Kind != yaml.ScalarNode || strings.Contains(e.Value, ",") {
				return "", fmt.Errorf("want a list of plain values (line %d)", e.Line)
			}
			items[i] = e.Value
		}
		return strings.Join(items, ","), nil
	}
	return "", errors.New("want a value or a list of values")
}
