package history

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/memsync/memsync/memfile"
)

// BenchmarkTake10MB: one snapshot of a 10 MB memory after one appended
// entry, in the process (go test -cpuprofile shows where its time goes).
func BenchmarkTake10MB(b *testing.B) {
	h, _ := testRepo(b)
	if err := os.MkdirAll(h.Store.Home, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(h.Store.Path(), memfile.GenerateFile(10<<20, 1), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := h.Take(ctx, "", Provenance{}); err != nil {
		b.Fatal(err)
	}
	f, err := os.OpenFile(h.Store.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	b.ResetTimer()
	for i := range b.N {
		if _, err := fmt.Fprintf(f, "\n## Fix: change %d\n- Tags: bench\n- Date: 2026-11-22\n- Content: learned %d\n", i, i); err != nil {
			b.Fatal(err)
		}
		res, err := h.Take(ctx, "", Provenance{})
		if err != nil || !res.Created {
			b.Fatal(res, err)
		}
	}
}
