package predict

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 41: a --check document that cannot be read is named as --check's,
// not as a calibration's (the run's folder was right, the label misled).
func TestCheckDocumentErrorsSayCheck(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "out", "best")
	_, _, err := (&Model{}).CheckDocument(context.Background(), missing, 0)
	if err == nil {
		t.Fatal("a missing --check document read without an error")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "--check") || strings.Contains(msg, "calibration") || !strings.Contains(msg, missing) {
		t.Errorf("the error %q: want it to start with --check and name %s", msg, missing)
	}
}
