package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// DocumentNames are the names a results document has in an output folder,
// one per storage format (Formats), the default first.
func DocumentNames() []string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = f.FileName()
	}
	return names
}

// ErrAmbiguous marks an output folder that holds a results document in
// more than one format: which of them is the run would be left to chance
// (a copy of two runs' files, or a tool that wrote one format beside the
// other), so no reader picks one.
var ErrAmbiguous = errors.New("more than one results document")

// Find returns the results document of an output folder, whatever its
// format. A folder holding none is an error that wraps os.ErrNotExist; one
// holding a document in both formats is refused with an error that wraps
// ErrAmbiguous and names both files. Every command that reads "a document
// or its folder" comes here, through InDir.
func Find(dir string) (string, error) {
	names := DocumentNames()
	var found []string
	for _, name := range names {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s: a folder without a results document (%s or %s): %w", dir, names[0], names[1], os.ErrNotExist)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%s: %w: it holds both %s and %s; name the file to read", dir, ErrAmbiguous, found[0], found[1])
}

// InDir resolves a path given for a results document: a file is itself, a
// folder is the document Find finds in it.
func InDir(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return path, nil
	}
	return Find(path)
}
