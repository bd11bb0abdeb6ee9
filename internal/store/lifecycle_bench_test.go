package store

import (
	"fmt"
	"github.com/memsync/memsync/memfile"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkAdd is BenchmarkAppend with Add's duplicate check, index update,
// access record and limit check: its cost must stay flat in the file size too
// (ratio ≤ 1.2 between the empty and the 10 MB file). Each add is new content.
func BenchmarkAdd(b *testing.B) {
	for _, size := range []int{0, 10 << 20} {
		b.Run(fmt.Sprintf("file=%dMB", size>>20), func(b *testing.B) {
			dir := b.TempDir()
			s := &Store{Home: filepath.Join(dir, ".agent"), MaxBytes: 1 << 40, StateDir: filepath.Join(dir, "state"), Limits: &Limits{MaxEntries: 1 << 30, TTL: -1}}
			_ = os.MkdirAll(s.Home, 0o755)
			if size > 0 {
				_ = os.WriteFile(s.Path(), memfile.GenerateFile(size, 1), 0o644)
			}
			if _, _, err := s.Add(s.NewEntry("pattern", "", "warm-up: builds the index", nil)); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				e := s.NewEntry("pattern", "", fmt.Sprintf("a learning of typical length about retries and timeouts %d", i), []string{"bench"})
				if _, dup, err := s.Add(e); err != nil || dup != NotDup {
					b.Fatal(err, dup)
				}
			}
		})
	}
}
