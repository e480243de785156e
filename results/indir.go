package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// DocumentNames are the names a results document has in its output
// folder, in the order InDir looks for them: compressed, then plain.
var DocumentNames = []string{"results.json.gz", "results.json"}

// InDir resolves a path given for a results document: a file is itself; a
// folder holds the document under one of DocumentNames, and must hold
// exactly one of them (two would leave it to chance which run is read).
func InDir(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return path, nil
	}
	var found []string
	for _, name := range DocumentNames {
		p := filepath.Join(path, name)
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s: a folder without a results document (%s or %s)", path, DocumentNames[0], DocumentNames[1])
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%s: holds both %s and %s: name the one to read", path, DocumentNames[0], DocumentNames[1])
}
