// Package testdisk gives tests a real, size-limited filesystem, to fill up.
package testdisk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/promptwall/promptwall/internal/testsvc"
)

// Small mounts a tmpfs of size bytes on a temporary directory and returns
// it, or skips the test when this process may not mount (it needs root).
// Under CI (CI=true), which runs as root, not mounting is a failure.
func Small(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		if testsvc.InCI() {
			t.Fatalf("cannot mount a %d-byte tmpfs for a full-disk test under CI=true (CI runs as root): %v", size, err)
		}
		t.Skipf("cannot mount a %d-byte tmpfs for a full-disk test (needs root with CAP_SYS_ADMIN; CI runs as root): %v", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting the test tmpfs %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes a ballast file in dir until its filesystem is full and
// returns the file's path: removing it gives the space back.
func Fill(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "ballast")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			return path
		}
	}
}
