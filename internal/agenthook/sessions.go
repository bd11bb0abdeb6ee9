package agenthook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/lock"
)

// Bounds of the session records.
const (
	// MaxSessions is how many sessions' records are kept; the oldest go
	// first.
	MaxSessions = 64
	// MaxAge is how long a session's record is kept after its last change.
	MaxAge = 14 * 24 * time.Hour
	// maxRecordBytes bounds one session's record (some 4,900 entry IDs):
	// once full, the session is given nothing more.
	maxRecordBytes = 64 << 10
)

// Sessions are the records of what agent sessions were given, in Dir: one
// small file per session, named by a hash of its agent and ID, rewritten
// atomically under one lock (Dir + ".lock") held from the read of a record
// to its update, so concurrent hooks of a session never give an entry
// twice nor lose a record.
type Sessions struct {
	Dir           string
	Perm, DirPerm os.FileMode
}

// Record is one session's record, held locked until Close.
type Record struct {
	path string
	ids  []string
	seen map[string]bool
	l    *lock.Lock
	full bool
}

// Open takes the lock within timeout (and ctx) and reads the record of
// in's session; with in.Fresh() the record starts empty, and records past
// MaxAge or MaxSessions are removed.
func (s Sessions) Open(ctx context.Context, in Input, timeout time.Duration) (*Record, error) {
	if err := fsutil.MkdirAll(s.Dir, s.DirPerm); err != nil {
		return nil, err
	}
	l, err := lock.Exclusive(ctx, s.Dir+".lock", timeout)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(in.Agent + "\x00" + in.Session))
	r := &Record{path: filepath.Join(s.Dir, hex.EncodeToString(sum[:16])), seen: map[string]bool{}, l: l}
	if in.Fresh() {
		s.prune(r.path)
		return r, nil
	}
	data, err := fsutil.ReadOwn(r.path, maxRecordBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		_ = l.Release()
		return nil, err
	}
	for id := range strings.Lines(string(data)) {
		if id = strings.TrimSuffix(id, "\n"); id != "" && !r.seen[id] {
			r.seen[id] = true
			r.ids = append(r.ids, id)
		}
	}
	r.full = len(data) >= maxRecordBytes-256
	return r, nil
}

// Has tells whether the session was given entry id.
func (r *Record) Has(id string) bool { return r.seen[id] }

// Full tells whether the record has no room for more: the session is
// given nothing more.
func (r *Record) Full() bool { return r.full }

// Add records that the session was given ids.
func (r *Record) Add(s Sessions, ids ...string) error {
	for _, id := range ids {
		if !r.seen[id] {
			r.seen[id] = true
			r.ids = append(r.ids, id)
		}
	}
	data := strings.Join(r.ids, "\n") + "\n"
	if len(data) > maxRecordBytes {
		data = data[:strings.LastIndexByte(data[:maxRecordBytes], '\n')+1]
	}
	return fsutil.WriteCache(r.path, []byte(data), s.Perm)
}

// Close lets the lock go.
func (r *Record) Close() error { return r.l.Release() }

// prune removes the record at path (a session starting afresh) and those
// past MaxAge, then the oldest past MaxSessions.
func (s Sessions) prune(path string) {
	_ = os.Remove(path)
	des, err := os.ReadDir(s.Dir)
	if err != nil {
		return
	}
	type rec struct {
		path string
		mod  time.Time
	}
	var recs []rec
	for _, de := range des {
		fi, err := de.Info()
		if err != nil || !fi.Mode().IsRegular() || len(de.Name()) != 32 {
			continue // a temp file being written, or not a record
		}
		p := filepath.Join(s.Dir, de.Name())
		if time.Since(fi.ModTime()) > MaxAge {
			_ = os.Remove(p)
			continue
		}
		recs = append(recs, rec{p, fi.ModTime()})
	}
	if len(recs) < MaxSessions {
		return
	}
	slices.SortFunc(recs, func(a, b rec) int { return a.mod.Compare(b.mod) })
	for _, r := range recs[:len(recs)-MaxSessions+1] { // room for the one starting
		_ = os.Remove(r.path)
	}
}
