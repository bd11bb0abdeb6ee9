package memsync

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/hooks"
	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/remote"
	"github.com/memsync/memsync/memfile"
)

// TestRootTypesCarryEveryField: the root's result types are converted by
// hand from the internal packages' (snapshot.go, hookstatus.go, Sync, Purge,
// Summary): each carries every JSON field of its source, in the source's
// order, so the JSON the front doors print stays what it was and a field
// added inside does not silently go missing from the API.
func TestRootTypesCarryEveryField(t *testing.T) {
	for _, c := range []struct {
		root, inner any
	}{
		{SyncResult{}, remote.Result{}},
		{PurgeResult{}, history.PurgeResult{}},
		{Snapshot{}, history.Snapshot{}},
		{LogEntry{}, history.LogEntry{}},
		{EntryChange{}, history.EntryChange{}},
		{RollbackResult{}, history.RollbackResult{}},
		{HookStatus{}, hooks.Status{}},
		{Hook{}, hooks.Hook{}},
		{HookManager{}, hooks.Manager{}},
		{FileSummary{}, memfile.Summary{}},
	} {
		root, inner := jsonFields(reflect.TypeOf(c.root)), jsonFields(reflect.TypeOf(c.inner))
		var kept []string
		for _, f := range root {
			if slices.Contains(inner, f) {
				kept = append(kept, f)
			}
		}
		if !slices.Equal(kept, inner) {
			t.Errorf("%T has the JSON fields %v of %T as %v", c.root, inner, c.inner, kept)
		}
	}
}

// jsonFields are the names encoding/json gives t's fields, in order, with
// embedded structs' fields in their place ("-" left out).
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
		case f.Anonymous && name == "" && ft.Kind() == reflect.Struct:
			out = append(out, jsonFields(ft)...)
		case name == "":
			out = append(out, f.Name)
		default:
			out = append(out, name)
		}
	}
	return out
}
