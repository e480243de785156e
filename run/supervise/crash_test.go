package supervise

import (
	"fmt"
	"strings"
	"testing"
)

// Issue 42 case 15: a crashed worker's Go traceback (250-290 lines)
// became the repetition's error cut from its start: its tail, the stacks
// of idle goroutines, without the panic that said what happened. The
// error keeps the panic and the top of its stack.
func TestACrashSaysWhatCrashed(t *testing.T) {
	b := &TailBuffer{Max: 16 << 10}
	fmt.Fprint(b, "setup done\npanic: runtime error: index out of range [7] with length 3\n\ngoroutine 1 [running]:\n")
	for i := range 290 {
		fmt.Fprintf(b, "github.com/provebench/provebench/pipeline.(*engine).frame%d(...)\n\t/src/pipeline/engine.go:%d +0x1d\n", i, i)
	}
	got := b.Crash()
	if !strings.HasPrefix(got, "panic: runtime error: index out of range") || strings.Count(got, "\n") > CrashLines || !strings.Contains(got, "left out") {
		t.Errorf("crash summary (%d lines):\n%s", strings.Count(got, "\n")+1, got)
	}
	plain := &TailBuffer{Max: 16 << 10}
	fmt.Fprint(plain, "killed by the OOM killer\n")
	if got := plain.Crash(); got != "killed by the OOM killer" {
		t.Errorf("no traceback: %q", got)
	}
}
