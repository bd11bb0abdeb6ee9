package memsync

import (
	"context"
	"testing"
)

// TestSearchLayersNone: a search of no memory finds nothing; it panicked
// (index out of range), as a variadic's caller passing an empty list
// (every layer the configuration enables, none enabled) would not expect.
func TestSearchLayersNone(t *testing.T) {
	for _, q := range []string{"pool", ""} {
		got, err := SearchLayers(context.Background(), q, SearchOptions{})
		if err != nil || len(got) != 0 {
			t.Errorf("SearchLayers(%q) of no layer: %v, %v", q, got, err)
		}
	}
}
