package groth16

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/shape"
)

// AutoSetupMax is the largest domain for which KindAuto runs a real setup
// (gpu/shape).
const AutoSetupMax = shape.AutoSetupMax

// Cache stores keys on disk, one file per domain size and kind, so each
// child process of a sweep maps the same key instead of generating it.
type Cache struct {
	Dir string
	// Log, if set, is told when a key is generated (it can take minutes).
	Log func(format string, args ...any)
}

// DefaultCacheDir is $PROVEBENCH_CACHE, or provebench/keys under the user's
// cache directory.
func DefaultCacheDir() string {
	if d := os.Getenv("PROVEBENCH_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "provebench", "keys")
	}
	return filepath.Join(os.TempDir(), "provebench-keys")
}

// Path is the file that holds the key of a circuit (its size and bit
// fraction; synthesis rounds do not change the key) and kind.
func (c Cache) Path(p circuit.Params, kind KeyKind) string {
	return filepath.Join(c.Dir, fmt.Sprintf("bls12381-2^%d-bits%03d-%s-v%d.key",
		p.LogConstraints(), p.EffectiveBitsPerMille(), kind, keyFormat))
}

// Get returns the key for a circuit, generating and storing it first if
// the cache has none (or an unusable one). Concurrent callers, in this
// process or others, wait for one generation through a file lock.
func (c Cache) Get(ctx context.Context, p circuit.Params, kind KeyKind) (*ProvingKey, *VerifyingKey, error) {
	kind = kind.Resolve(p.Constraints)
	if kind != KindSetup && kind != KindRandom {
		return nil, nil, fmt.Errorf("key kind %q: want setup, random or auto", kind)
	}
	p = circuit.Params{Constraints: p.Constraints, BitsPerMille: p.BitsPerMille}
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("key cache: %w", err)
	}
	path := c.Path(p, kind)
	unlock, err := lockFile(ctx, path+".lock")
	if err != nil {
		return nil, nil, err
	}
	defer unlock()

	pk, vk, err := LoadKey(path)
	if err == nil {
		return pk, vk, nil
	}
	if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, ErrKeyFormat) {
		return nil, nil, err
	}
	start := time.Now()
	if c.Log != nil {
		c.Log("generating %s key for 2^%d constraints into %s", kind, p.LogConstraints(), path)
	}
	if kind == KindSetup {
		spk, svk, err := SetupContext(ctx, p, nil)
		if err != nil {
			return nil, nil, err
		}
		err = writeKeyFile(path, spk, svk)
		if err != nil {
			return nil, nil, err
		}
	} else if err := writeRandomKey(ctx, path, p); err != nil {
		return nil, nil, err
	}
	if c.Log != nil {
		c.Log("generated %s key for 2^%d constraints in %.1fs", kind, p.LogConstraints(), time.Since(start).Seconds())
	}
	return LoadKey(path)
}

// lockFile takes an exclusive flock on path, polling so ctx can cancel the
// wait.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("key cache lock: %w", err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("key cache lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// writeMapped creates the key file at path atomically: a temporary file in
// the same directory is sized, filled through a shared writable mapping,
// synced and renamed into place, so a reader never sees a partial key.
func writeMapped(path string, h keyHeader, l keyLayout, fill func(mem []byte) error) (err error) {
	hdr, err := h.encode()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write key: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Truncate(l.size); err != nil {
		return fmt.Errorf("write key %s: size: %w", path, err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(l.size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("write key %s: mmap: %w", path, err)
	}
	copy(mem, hdr)
	ferr := fill(mem)
	if ferr == nil {
		ferr = unix.Msync(mem, unix.MS_SYNC)
	}
	if uerr := unix.Munmap(mem); ferr == nil {
		ferr = uerr
	}
	if ferr != nil {
		return fmt.Errorf("write key %s: %w", path, ferr)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write key %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write key %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write key %s: %w", path, err)
	}
	return nil
}
