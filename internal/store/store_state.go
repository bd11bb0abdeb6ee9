package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/memsync/memsync/memfile"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memsync/memsync/internal/fsutil"
)

// The state of a store lives in StateDir, never in the memory files and never
// in snapshots. All of it is a cache that memsync can rebuild from the memory
// files, except the access log (losing it only restarts the TTL clocks):
//
//	access.log      one "UNIXSECONDS ID" line per entry returned to a reader;
//	                appended with one O_APPEND write, no lock, no fsync
//	stamp.json      size and mtime of the active file and the archive when the
//	                index last matched them, entry counts, time of the last gc
//	index-v2-GEN/X  "HASH ID" lines of every entry, by the first hex digit
//	                of the hash of its normalized content (16 files: a
//	                rebuild, after every change made behind memsync's back,
//	                writes 17 files, not 257 as format 1's two digits did)
//	index-v2-GEN/archived  the IDs in the archive, one a line
//
// The index and the stamp are written under the writers' lock; the stamp last
// (in place, see stampSize),
// so a crash leaves a stamp that no longer matches the files, and the next
// write rebuilds the index. A file changed behind memsync's back (an editor,
// orch itself, a merge) changes size or mtime and is handled the same way.

const (
	accessLog = "access.log"
	stampFile = "stamp.json"
)

// fileStamp is what tells memsync whether a memory file changed.
type fileStamp struct {
	Size  int64 `json:"size"`
	Mtime int64 `json:"mtime_ns"`
}

// indexFormat is the format of the index stamp.json names: a stamp of
// another format (an older memsync's) is not used, and the index is
// rebuilt; an older memsync finds no index-GEN of a newer stamp's gen and
// rebuilds its own.
const indexFormat = 2

// bucket is the name of the index file that holds content hash h.
func bucket(h string) string { return h[:1] }

// index is the content index of a store, as stamp.json describes it.
type index struct {
	Format   int       `json:"format"`
	Gen      int64     `json:"gen"`
	Active   fileStamp `json:"active"`
	Archive  fileStamp `json:"archive"`
	Count    int       `json:"count"`    // entries in the active file
	Archived int       `json:"archived"` // entries in the archive
	LastGC   int64     `json:"last_gc"`  // unix seconds of the last gc
}

func (s *Store) statePath(name string) string { return filepath.Join(s.StateDir, name) }

func (x *index) dir(s *Store) string { return s.statePath(fmt.Sprintf("index-v2-%d", x.Gen)) }

func (s *Store) stamps() (active, archive fileStamp) {
	for i, p := range []string{s.Path(), s.ArchivePath()} {
		fs := fileStamp{}
		if t, err := s.Resolve(p); err == nil {
			if fi, err := os.Stat(t); err == nil {
				fs = fileStamp{fi.Size(), fi.ModTime().UnixNano()}
			}
		}
		if i == 0 {
			active = fs
		} else {
			archive = fs
		}
	}
	return active, archive
}

// openIndexLocked returns the index if it matches the memory files, else nil.
func (s *Store) openIndexLocked() *index {
	if s.StateDir == "" {
		return nil
	}
	data, err := fsutil.ReadOwn(s.statePath(stampFile), stampSize)
	if err != nil {
		return nil
	}
	var x index
	if json.Unmarshal(data, &x) != nil || x.Format != indexFormat {
		return nil
	}
	act, arc := s.stamps()
	if x.Active != act || x.Archive != arc {
		return nil
	}
	return &x
}

// indexLocked returns a valid index, rebuilding it from the memory files if
// they changed since it was written. It returns nil without a StateDir.
func (s *Store) indexLocked() (*index, error) {
	if x := s.openIndexLocked(); x != nil || s.StateDir == "" {
		return x, nil
	}
	return s.rebuildIndexLocked()
}

func (s *Store) rebuildIndexLocked() (*index, error) {
	var old index
	if data, err := fsutil.ReadOwn(s.statePath(stampFile), stampSize); err == nil {
		_ = json.Unmarshal(data, &old)
	}
	act, err := s.load(s.Path(), false)
	if err != nil {
		return nil, err
	}
	arc, err := s.load(s.ArchivePath(), false)
	if err != nil {
		return nil, err
	}
	x := &index{Format: indexFormat, Gen: time.Now().UnixNano(), Count: len(act.Entries), Archived: len(arc.Entries), LastGC: old.LastGC}
	x.Active, x.Archive = s.stamps()
	if err := fsutil.MkdirAll(x.dir(s), s.dirMode()); err != nil {
		return nil, err
	}
	buckets := map[string]*bytes.Buffer{}
	var archived bytes.Buffer
	for k, f := range []*memfile.File{act, arc} {
		for i := range f.Entries {
			e := &f.Entries[i]
			h := memfile.ContentHash(e.Content)
			b := buckets[bucket(h)]
			if b == nil {
				b = &bytes.Buffer{}
				buckets[bucket(h)] = b
			}
			fmt.Fprintf(b, "%s %s\n", h, e.ID)
			if k == 1 {
				archived.WriteString(e.ID + "\n")
			}
		}
	}
	for name, b := range buckets {
		if err := writeState(filepath.Join(x.dir(s), name), b.Bytes(), s.fileMode()); err != nil {
			return nil, err
		}
	}
	if err := writeState(filepath.Join(x.dir(s), "archived"), archived.Bytes(), s.fileMode()); err != nil {
		return nil, err
	}
	if err := x.save(s); err != nil {
		return nil, err
	}
	// Every other generation goes: the one the old stamp named, and those a
	// stamp removed (invalidateIndex) or damaged no longer names.
	gens, _ := filepath.Glob(s.statePath("index-*"))
	for _, g := range gens {
		if g != x.dir(s) {
			_ = os.RemoveAll(g)
		}
	}
	return x, nil
}

// stampSize is the fixed size of stamp.json: it is rewritten in place with
// one write of this many bytes (JSON padded with spaces), which a killed
// process cannot tear, and which costs less than a rename. A stamp torn by a
// power loss does not parse or does not match the files: the index is rebuilt.
const stampSize = 512

// save writes stamp.json (a cache: no fsync).
func (x *index) save(s *Store) error {
	data, err := json.Marshal(x)
	if err != nil {
		return err
	}
	if len(data) >= stampSize {
		return fmt.Errorf("stamp too large")
	}
	data = append(data, bytes.Repeat([]byte{' '}, stampSize-len(data)-1)...)
	data = append(data, '\n')
	f, err := fsutil.OpenFile(s.statePath(stampFile), os.O_WRONLY|os.O_CREATE, s.fileMode())
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if fi, serr := f.Stat(); err == nil && serr == nil && fi.Size() > stampSize {
		err = f.Truncate(stampSize) // a longer file left by something else
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxIndexList bounds the read of one list of the content index (a bucket,
// the archived IDs): far above what any memory within the size caps makes,
// so that a file someone else put there is never read whole.
const maxIndexList = 256 << 20

// invalidate makes the next write rebuild the index.
func (s *Store) invalidateIndex() { _ = os.Remove(s.statePath(stampFile)) }

// hit is an entry the content index holds for a content hash.
type hit struct {
	id       string
	archived bool
}

// errIndexDamaged is what lookup returns for index files that memsync did
// not write as they are (a torn line, garbage, another bucket's hashes, a
// generation without its archived list): the index is rebuilt.
var errIndexDamaged = errors.New("content index damaged")

// lookup returns the entries with the content hash h, active ones first. It
// reads one bucket (and the archived list only on a hit), and checks that
// every bucket line it reads is one memsync writes. The archived flags only
// order the hits: findDupLocked looks for each in both files.
func (x *index) lookup(s *Store, h string) ([]hit, error) {
	data, err := fsutil.ReadOwn(filepath.Join(x.dir(s), bucket(h)), maxIndexList)
	if errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(x.dir(s), "archived")); err != nil {
			return nil, errIndexDamaged // no such generation
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for l := range indexLines(data) {
		hh, id, ok := strings.Cut(l, " ")
		if !ok || !isHash(hh) || bucket(hh) != bucket(h) {
			return nil, errIndexDamaged
		}
		if hh == h {
			ids = append(ids, id)
		}
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, errIndexDamaged // a bucket is never written empty or torn
	}
	if len(ids) == 0 {
		return nil, nil
	}
	arch, err := x.archivedSet(s)
	if err != nil {
		return nil, err
	}
	hits := make([]hit, 0, len(ids))
	for _, i := range ids {
		hits = append(hits, hit{i, arch[i]})
	}
	sort.SliceStable(hits, func(a, b int) bool { return !hits[a].archived && hits[b].archived })
	return hits, nil
}

func (x *index) archivedSet(s *Store) (map[string]bool, error) {
	set := map[string]bool{}
	data, err := fsutil.ReadOwn(filepath.Join(x.dir(s), "archived"), maxIndexList)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errIndexDamaged
	}
	if err != nil {
		return nil, err
	}
	for l := range indexLines(data) {
		set[l] = true
	}
	return set, nil
}

// indexLines yields the non-empty lines of an index file.
func indexLines(data []byte) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" && !yield(l) {
				return
			}
		}
	}
}

// isHash tells whether s is a ContentHash: 16 lower-case hex digits.
func isHash(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// added records an entry appended to the active file.
func (x *index) added(s *Store, e *memfile.Entry) error {
	h := memfile.ContentHash(e.Content)
	f, err := fsutil.OpenFile(filepath.Join(x.dir(s), bucket(h)), os.O_WRONLY|os.O_APPEND|os.O_CREATE, s.fileMode())
	if err != nil {
		return err
	}
	_, err = f.WriteString(h + " " + e.ID + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	x.Count++
	x.Active, x.Archive = s.stamps()
	return x.save(s)
}

// moved records a Move: the hashes stay; the archived list and the counts
// change. On an error the index is dropped, to be rebuilt by the next write.
func (x *index) moved(s *Store, archived map[string]bool, count int) {
	var b strings.Builder
	for id := range archived {
		b.WriteString(id + "\n")
	}
	if err := writeState(filepath.Join(x.dir(s), "archived"), []byte(b.String()), s.fileMode()); err != nil {
		s.invalidateIndex()
		return
	}
	x.Count, x.Archived = count, len(archived)
	x.Active, x.Archive = s.stamps()
	if x.save(s) != nil {
		s.invalidateIndex()
	}
}

// RecordAccess notes that entries were just returned to a reader (show,
// search, inject), for the TTL of gc. It is one small O_APPEND write with no
// lock and no fsync, and it never fails a read: errors are ignored.
func (s *Store) RecordAccess(ids ...string) {
	if s.StateDir == "" || len(ids) == 0 {
		return
	}
	var b strings.Builder
	now := strconv.FormatInt(s.now().Unix(), 10)
	for _, id := range ids {
		b.WriteString(now + " " + id + "\n")
	}
	f, err := fsutil.OpenFile(s.statePath(accessLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, s.fileMode())
	if errors.Is(err, os.ErrNotExist) {
		if fsutil.MkdirAll(s.StateDir, s.dirMode()) != nil {
			return
		}
		f, err = fsutil.OpenFile(s.statePath(accessLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, s.fileMode())
	}
	if err != nil {
		return
	}
	_, _ = f.WriteString(b.String())
	_ = f.Close()
}

// LastAccess reads the access log: the last time each entry was returned.
func (s *Store) LastAccess() map[string]time.Time {
	out := map[string]time.Time{}
	s.scanAccess(func(t time.Time, id string) {
		if t.After(out[id]) {
			out[id] = t
		}
	})
	return out
}

// AccessCounts reads the access log: how many times each entry was
// returned since the log was last compacted (gc keeps one line per entry).
func (s *Store) AccessCounts() map[string]int {
	out := map[string]int{}
	s.scanAccess(func(_ time.Time, id string) { out[id]++ })
	return out
}

// scanAccess calls fn with each line of the access log that parses.
func (s *Store) scanAccess(fn func(t time.Time, id string)) {
	if s.StateDir == "" {
		return
	}
	f, err := fsutil.OpenOwn(s.statePath(accessLog))
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ts, id, ok := strings.Cut(sc.Text(), " ")
		n, err := strconv.ParseInt(ts, 10, 64)
		if !ok || err != nil || id == "" {
			continue // a torn line
		}
		fn(time.Unix(n, 0), id)
	}
}

// compactAccess rewrites the access log with one line per entry in keep.
// Accesses recorded while it runs may be lost; that only restarts a clock.
func (s *Store) compactAccess(last map[string]time.Time, keep []memfile.Entry) {
	if s.StateDir == "" {
		return
	}
	var b strings.Builder
	for _, e := range keep {
		if t, ok := last[e.ID]; ok {
			b.WriteString(strconv.FormatInt(t.Unix(), 10) + " " + e.ID + "\n")
		}
	}
	_ = fsutil.MkdirAll(s.StateDir, s.dirMode()) // a gc before any add: keep the first-seen times
	_ = fsutil.WriteFile(s.statePath(accessLog), []byte(b.String()), s.fileMode())
}

// writeState writes a state file in place (a cache: no rename, no fsync); a
// new one gets exactly perm.
func writeState(path string, data []byte, perm os.FileMode) error {
	f, err := fsutil.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
