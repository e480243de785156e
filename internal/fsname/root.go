package fsname

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// RootPath restates an error of an os.Root of dir with the path as the
// user gave it: "out/link/victim: path escapes from parent" rather than
// the root's "lstatat link/victim: ...".
func RootPath(dir string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", filepath.Join(dir, pe.Path), pe.Err)
	}
	return err
}
