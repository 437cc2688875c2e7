package spec

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxFileSize bounds a settings file (they are a few lines).
const maxFileSize = 1 << 20

// File is what a settings file holds: detectors to run at one setting each
// and sweeps.
type File struct {
	Detectors []Spec
	Sweeps    []Sweep
}

// LoadFile reads a YAML settings file. Its shape:
//
//	detectors:
//	  - phi-akka(threshold=10, pause=3s)      # the textual form, or
//	  - detector: phi-akka                   # a family or preset and its
//	    threshold: 12                         # parameters as keys
//	    pause: 0s
//	sweeps:
//	  - chen(window=1000) alpha=10ms..1s
//
// Errors name the file, the line and the parameter. Unknown top-level keys
// are errors, so that a misspelt section is not silently ignored.
func LoadFile(path string) (File, error) {
	f, err := os.Open(path)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxFileSize {
		return File{}, fmt.Errorf("%s: larger than %d bytes: not a settings file", path, maxFileSize)
	}
	return Decode(path, data)
}

// Decode reads a settings file's contents; name prefixes its errors.
func Decode(name string, data []byte) (File, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if err == io.EOF {
			return File{}, fmt.Errorf("%s: empty settings file (expected detectors: and/or sweeps:)", name)
		}
		return File{}, fmt.Errorf("%s: %w", name, err)
	}
	// A second document would be silently ignored: refuse it.
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		if err != nil {
			return File{}, fmt.Errorf("%s: %w", name, err)
		}
		return File{}, fmt.Errorf("%s:%d: a second YAML document (---): a settings file is one document", name, extra.Line)
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	at := func(n *yaml.Node, format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", name, n.Line, fmt.Sprintf(format, a...))
	}
	if doc.Kind != yaml.MappingNode {
		return File{}, at(doc, "expected a mapping with detectors: and/or sweeps:")
	}
	var out File
	sections := map[string]bool{}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		key, val := doc.Content[i], doc.Content[i+1]
		if sections[key.Value] {
			return File{}, at(key, "%s: given twice", key.Value)
		}
		sections[key.Value] = true
		if val.Kind != yaml.SequenceNode {
			return File{}, at(val, "%s: expected a list", key.Value)
		}
		switch key.Value {
		case "detectors":
			for _, item := range val.Content {
				s, where, err := decodeSpec(item)
				if err != nil {
					return File{}, at(where, "%v", err)
				}
				out.Detectors = append(out.Detectors, s)
			}
		case "sweeps":
			for _, item := range val.Content {
				if item.Kind != yaml.ScalarNode {
					return File{}, at(item, "a sweep is one line such as chen(window=1000) alpha=10ms..1s")
				}
				w, err := ParseSweep(item.Value)
				if err != nil {
					return File{}, at(item, "%v", err)
				}
				out.Sweeps = append(out.Sweeps, w)
			}
		default:
			return File{}, at(key, "unknown section %q (expected detectors or sweeps)", key.Value)
		}
	}
	return out, nil
}

// decodeSpec reads one detector; on error it returns the node to blame.
func decodeSpec(n *yaml.Node) (Spec, *yaml.Node, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		s, err := Parse(n.Value)
		return s, n, err
	case yaml.MappingNode:
	default:
		return Spec{}, n, fmt.Errorf("a detector is a spec string or a mapping with detector: and its parameters")
	}
	var name string
	var keys []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return Spec{}, k, fmt.Errorf("%s: expected a single value", k.Value)
		}
		if strings.EqualFold(k.Value, "detector") {
			if name != "" {
				return Spec{}, k, fmt.Errorf("detector: given twice")
			}
			name = v.Value
			continue
		}
		keys = append(keys, k, v)
	}
	if name == "" {
		return Spec{}, n, fmt.Errorf("missing detector: (a family or preset name)")
	}
	if strings.ContainsAny(name, "()") {
		return Spec{}, n, fmt.Errorf("detector: %q: give the parameters as keys, not in parentheses", name)
	}
	s, err := base(name)
	if err != nil {
		return Spec{}, n, err
	}
	seen := map[string]bool{}
	for i := 0; i < len(keys); i += 2 {
		k, v := keys[i].Value, keys[i+1].Value
		if seen[s.key(k)] {
			return Spec{}, keys[i], fmt.Errorf("%s is given twice", k)
		}
		seen[s.key(k)] = true
		next, err := s.With(k, v)
		if err != nil {
			// With's errors name the family: name it once, and a preset
			// or alias before it ("akka: phi-akka: pause: ...").
			if strings.EqualFold(name, s.fam.Name) {
				return Spec{}, keys[i], err
			}
			return Spec{}, keys[i], fmt.Errorf("%s: %w", name, err)
		}
		s = next
	}
	return s, n, nil
}
