package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/words"
	"github.com/memsync/memsync/memfile"
)

// RollbackResult is what Rollback did.
type RollbackResult struct {
	Target   string   `json:"target"`   // the snapshot rolled back to
	IDs      []string `json:"ids"`      // the entries brought back (full IDs); empty for the whole memory
	Before   string   `json:"before"`   // the snapshot of the memory as it was before (taken first if needed)
	Snapshot string   `json:"snapshot"` // the snapshot of the result; "" when nothing changed
}

// Rollback brings the memory back to the state of snapshot target (a hash
// from Resolve): the whole memory, or only the entries refs name (IDs,
// unique prefixes, or numbers as the target's list prints them). For each
// named entry, the active file and the archive get it as it was at target:
// replaced, put back, or removed when it did not exist there.
//
// Everything happens under the writers' lock: the live memory is snapshotted
// first (so the rollback can be undone), the files are rewritten atomically
// (archive first), and the result is snapshotted with a message naming the
// target.
//
// ctx stops Rollback before it changes a file; once the files are
// rewritten, the result is snapshotted whatever ctx says.
func (h *History) Rollback(ctx context.Context, target string, refs []string, p Provenance) (*RollbackResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	at, err := h.Files(target)
	if err != nil {
		return nil, err
	}
	res := &RollbackResult{Target: target, IDs: []string{}}
	err = h.Store.WithLock(func() error {
		before, err := h.takeLocked(ctx, "memsync snapshot before rollback to "+words.Short(target), p, "", false)
		if err != nil {
			return err
		}
		if before.Snapshot != nil {
			res.Before = before.Snapshot.Commit
		}
		live, err := h.readLiveLocked()
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		next := at
		if len(refs) > 0 {
			if next, res.IDs, err = pick(live, at, refs); err != nil {
				return err
			}
		}
		if err := h.writeLocked(h.Store.ArchivePath(), live.Archive, next.Archive); err != nil {
			return err
		}
		if err := h.writeLocked(h.Store.Path(), live.Memory, next.Memory); err != nil {
			return err
		}
		msg := "memsync rollback to " + words.Short(target)
		if len(res.IDs) > 0 {
			msg += fmt.Sprintf(" (%d entries)", len(res.IDs))
		}
		after, err := h.takeLocked(context.WithoutCancel(ctx), msg, p, target, false)
		if err != nil {
			return err
		}
		if after.Created {
			res.Snapshot = after.Snapshot.Commit
		}
		return nil
	})
	return res, err
}

// writeLocked replaces a memory file's content; a file the target state
// lacks becomes an empty memory file. The caller holds the lock.
func (h *History) writeLocked(path string, old, data []byte) error {
	if data == nil {
		if old == nil {
			return nil
		}
		data = []byte(memfile.Header + "\n")
	}
	if bytes.Equal(old, data) {
		return nil
	}
	// Both memory files must be writable before either changes.
	if err := h.Store.CheckWritable(h.Store.Path(), h.Store.ArchivePath()); err != nil {
		return err
	}
	target, err := h.Store.Resolve(path)
	if err != nil {
		return err
	}
	if err := fsutil.MkdirAll(filepath.Dir(target), h.Store.DirPerm()); err != nil {
		return err
	}
	return fsutil.WriteFile(target, data, h.Store.FilePerm())
}

// pick makes the live files with the entries refs names as they are in at.
func pick(live, at Files, refs []string) (Files, []string, error) {
	files := map[string]*memfile.File{
		"live": memfile.Parse(live.Memory), "live archive": memfile.Parse(live.Archive),
		"at": memfile.Parse(at.Memory), "at archive": memfile.Parse(at.Archive),
	}
	var ids []string
	for _, ref := range refs {
		id, err := findID(ref, files["at"], files["at archive"], files["live"], files["live archive"])
		if err != nil {
			return Files{}, nil, err
		}
		ids = append(ids, id)
	}
	out := Files{}
	for _, pair := range []struct {
		live, at string
		dst      *[]byte
		old      []byte
	}{
		{"live", "at", &out.Memory, live.Memory},
		{"live archive", "at archive", &out.Archive, live.Archive},
	} {
		f := files[pair.live]
		if pair.old == nil {
			f.Preamble = memfile.Header + "\n"
		}
		for _, id := range ids {
			set(f, id, files[pair.at])
		}
		*pair.dst = pair.old
		if rendered := f.Render(); pair.old != nil || len(f.Entries) > 0 {
			*pair.dst = rendered
		}
	}
	return out, ids, nil
}

// findID resolves a reference against the files in order: the first file
// where it names an entry decides. Ambiguity is an error.
func findID(ref string, files ...*memfile.File) (string, error) {
	var first error
	for _, f := range files {
		i, err := f.Find(ref)
		if err == nil {
			return f.Entries[i].ID, nil
		}
		if errors.Is(err, memfile.ErrAmbiguous) {
			return "", err
		}
		if first == nil {
			first = err
		}
	}
	return "", first
}

// set makes entry id in f what it is in from: replaced in place, appended,
// or removed.
func set(f *memfile.File, id string, from *memfile.File) {
	var want *memfile.Entry
	for i := range from.Entries {
		if from.Entries[i].ID == id {
			want = &from.Entries[i]
		}
	}
	for i := range f.Entries {
		if f.Entries[i].ID != id {
			continue
		}
		if want != nil {
			f.Entries[i] = *want
		} else {
			f.Entries = append(f.Entries[:i], f.Entries[i+1:]...)
		}
		return
	}
	if want != nil {
		f.Entries = append(f.Entries, *want)
	}
}
