package history

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/memfile"
)

// filtered is a stored file read, and without the dropped entries.
type filtered struct {
	data    []byte // the file as stored
	out     []byte // without the entries (data when none was there)
	changed bool
	done    bool // out is made
}

// rewriter rewrites snapshots without the entries drop names.
type rewriter struct {
	h          *History
	drop       map[string]bool
	b          *batch
	memo       map[plumbing.Hash]filtered      // by the stored file's tree or blob
	mapped     map[plumbing.Hash]plumbing.Hash // old commit → new
	memChanged map[plumbing.Hash]bool          // old commit → its active file lost entries
}

// file reads the stored file s (memoized), and, once drop is set, makes
// it without the dropped entries (memoized too).
func (rw *rewriter) file(s stored, name string) (filtered, error) {
	key := s.tree
	if key.IsZero() {
		key = s.blob
	}
	if key.IsZero() {
		return filtered{}, nil
	}
	f, ok := rw.memo[key]
	if !ok {
		data, err := rw.h.read(s, rw.h.Limit(name), nil)
		if err != nil {
			return f, err
		}
		f = filtered{data: data, out: data}
	}
	if rw.drop != nil && !f.done {
		if name == conflictsName {
			f.out = dropConflicts(f.data, rw.drop)
		} else {
			f.out, _ = dropEntries(f.data, rw.drop)
		}
		f.changed, f.done = !bytes.Equal(f.out, f.data), true
	}
	rw.memo[key] = f
	return f, nil
}

// choose finds what opts names in the live files, the history and the
// fetched snapshots (one that cannot be read, a branch's commit pushed to
// a memsync ref, is passed over): the IDs to drop, a title for each, and
// how many snapshots hold one.
func (rw *rewriter) choose(live Files, commits, fetched []plumbing.Hash, opts PurgeOptions) (map[string]bool, map[string]string, int, error) {
	titles := map[string]string{} // every ID seen → its title
	matched := map[string]bool{}  // IDs the rule finds
	scanned := map[plumbing.Hash]bool{}
	var perCommit []map[string]bool
	look := func(data []byte, ids map[string]bool) {
		for _, e := range memfile.Parse(data).Entries {
			titles[e.ID] = safeTitle(e.Title)
			ids[e.ID] = true
			if opts.Rule == "" || matched[e.ID] {
				continue
			}
			key := plumbing.ComputeHash(plumbing.BlobObject, []byte(e.Heading()+"\x00"+e.Content+"\x00"+fmt.Sprint(e.Extra, e.Tags)))
			if scanned[key] {
				continue
			}
			scanned[key] = true
			for _, f := range e.Secrets() {
				if f.Rule == opts.Rule {
					matched[e.ID] = true
				}
			}
		}
	}
	lookLog := func(data []byte, ids map[string]bool) {
		rs, _ := merge.ParseLog("", data)
		for _, r := range rs {
			ids[r.ID] = true
			if _, ok := titles[r.ID]; !ok {
				titles[r.ID] = safeTitle(r.Title)
			}
			base, ours, theirs := r.Versions()
			vs := []memfile.Entry{ours, theirs}
			if base != nil {
				vs = append(vs, *base)
			}
			for _, v := range vs {
				for _, f := range v.Secrets() {
					if f.Rule == opts.Rule && opts.Rule != "" {
						matched[r.ID] = true
					}
				}
			}
		}
	}
	liveIDs := map[string]bool{}
	look(live.Memory, liveIDs)
	look(live.Archive, liveIDs)
	lookLog(live.Conflicts, liveIDs)
	seenFile := map[plumbing.Hash]map[string]bool{}
	for i, c := range append(slices.Clone(commits), fetched...) {
		l, err := rw.h.layoutAt(c)
		if err != nil && i >= len(commits) {
			continue
		}
		if err != nil {
			return nil, nil, 0, err
		}
		ids := map[string]bool{}
		for _, x := range []struct {
			s    stored
			name string
		}{{l.memory, MemoryName}, {l.archive, ArchiveName}, {l.conflicts, conflictsName}} {
			key := x.s.tree
			if key.IsZero() {
				key = x.s.blob
			}
			if key.IsZero() {
				continue
			}
			if got, ok := seenFile[key]; ok {
				for id := range got {
					ids[id] = true
				}
				continue
			}
			f, err := rw.file(x.s, x.name)
			if err != nil && i >= len(commits) {
				continue
			}
			if err != nil {
				return nil, nil, 0, err
			}
			got := map[string]bool{}
			if x.name == conflictsName {
				lookLog(f.data, got)
			} else {
				look(f.data, got)
			}
			seenFile[key] = got
			for id := range got {
				ids[id] = true
			}
		}
		perCommit = append(perCommit, ids)
	}
	drop := matched
	for _, ref := range opts.IDs {
		id, err := pickID(ref, titles)
		if err != nil {
			return nil, nil, 0, err
		}
		drop[id] = true
	}
	if len(drop) == 0 {
		return nil, nil, 0, fmt.Errorf("%w the rule %q", ErrNothingToPurge, opts.Rule)
	}
	holding := 0
	for _, ids := range perCommit {
		for id := range drop {
			if ids[id] {
				holding++
				break
			}
		}
	}
	return drop, titles, holding, nil
}

// pickID is the one ID of known that ref is, or that ref begins.
func pickID(ref string, known map[string]string) (string, error) {
	if _, ok := known[ref]; ok {
		return ref, nil
	}
	var found []string
	for id := range known {
		if ref != "" && strings.HasPrefix(id, ref) {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("%w: %q (%w)", memfile.ErrNotFound, ref, ErrNothingToPurge)
	}
	slices.Sort(found)
	return "", fmt.Errorf("%w: %q is the start of %s", memfile.ErrAmbiguous, ref, strings.Join(found, ", "))
}

// rewrite rewrites commits (parents first) without rw.drop and returns
// what tip becomes.
func (rw *rewriter) rewrite(commits []plumbing.Hash, tip plumbing.Hash) (plumbing.Hash, error) {
	for _, c := range commits {
		raw, err := readObject(rw.h.st, plumbing.CommitObject, c, maxMeta)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		info := parseCommit(c, raw)
		l, err := rw.h.readLayout(info.tree)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		var fs [3]filtered
		for i, x := range []struct {
			s    stored
			name string
		}{{l.memory, MemoryName}, {l.archive, ArchiveName}, {l.conflicts, conflictsName}} {
			if fs[i], err = rw.file(x.s, x.name); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		rw.memChanged[c] = fs[0].changed
		parents := make([]plumbing.Hash, len(info.parents))
		moved := false
		for i, p := range info.parents {
			parents[i] = p
			if n, ok := rw.mapped[p]; ok {
				parents[i] = n
			}
			moved = moved || parents[i] != p
		}
		treeChanged := fs[0].changed || fs[1].changed || fs[2].changed
		reRecord := fs[0].changed || (len(info.parents) > 0 && rw.memChanged[info.parents[0]])
		if !treeChanged && !moved && !reRecord {
			rw.mapped[c] = c
			continue
		}
		tree := info.tree
		if treeChanged {
			var purged []byte
			if l.purged.present() {
				if purged, err = readObject(rw.h.st, plumbing.BlobObject, l.purged.blob, rw.h.Limit(MemoryName)); err != nil {
					return plumbing.ZeroHash, err
				}
			}
			files := Files{Memory: fs[0].out, Archive: fs[1].out, Conflicts: fs[2].out, Purged: purged}
			if !l.memory.present() {
				files.Memory = nil
			}
			if !l.archive.present() {
				files.Archive = nil
			}
			if !l.conflicts.present() {
				files.Conflicts = nil
			}
			tree = addFiles(rw.b, files, haveOf(l))
		}
		msg := info.message
		if reRecord {
			var before []byte
			if len(info.parents) > 0 {
				pl, err := rw.h.layoutAt(info.parents[0])
				if err != nil {
					return plumbing.ZeroHash, err
				}
				pf, err := rw.file(pl.memory, MemoryName)
				if err != nil {
					return plumbing.ZeroHash, err
				}
				before = pf.out
			}
			msg = reRecorded(msg, before, fs[0].out)
		}
		msg = rw.remap(msg)
		data := rebuildCommit(raw, tree, parents, msg)
		rw.mapped[c] = rw.b.add(newObject(plumbing.CommitObject, data))
	}
	if n, ok := rw.mapped[tip]; ok {
		return n, nil
	}
	return tip, nil
}

// remap points a Memsync-Rollback trailer at the rewritten commit.
func (rw *rewriter) remap(msg string) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		if v, ok := strings.CutPrefix(l, trailerRollback+": "); ok && plumbing.IsHash(v) {
			if n, ok := rw.mapped[plumbing.NewHash(v)]; ok {
				lines[i] = trailerRollback + ": " + n.String()
			}
		}
	}
	return strings.Join(lines, "\n")
}

// reRecorded is msg with its record of changes (record.go) made again for
// the active files before and after; a message without one stays as it is.
func reRecorded(msg string, before, after []byte) string {
	if _, _, ok := recorded(msg); !ok {
		return msg
	}
	deliberate := strings.Contains(msg, "\n"+trailerRemoval+": deliberate\n")
	var kept []string
	for _, l := range strings.SplitAfter(msg, "\n") {
		k, _, _ := strings.Cut(l, ": ")
		switch k {
		case trailerEntries, trailerChanges, trailerAdded, trailerRemoved, trailerChanged, trailerMore, trailerRemoval:
			continue
		}
		kept = append(kept, l)
	}
	rec, _ := recordOf(before, after, true)
	rec.deliberate = deliberate
	out := strings.Join(kept, "")
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out + rec.trailers()
}

// rebuildCommit is the commit raw with another tree, parents and message;
// its other headers (author, committer, times) are kept, a signature is
// dropped (it no longer holds).
func rebuildCommit(raw []byte, tree plumbing.Hash, parents []plumbing.Hash, msg string) []byte {
	head, _, _ := strings.Cut(string(raw), "\n\n")
	var b strings.Builder
	b.WriteString("tree " + tree.String() + "\n")
	for _, p := range parents {
		b.WriteString("parent " + p.String() + "\n")
	}
	inSig := false
	for _, l := range strings.Split(head, "\n") {
		k, _, _ := strings.Cut(l, " ")
		if inSig && strings.HasPrefix(l, " ") {
			continue
		}
		inSig = false
		switch k {
		case "tree", "parent":
			continue
		case "gpgsig", "gpgsig-sha256":
			inSig = true
			continue
		}
		b.WriteString(l + "\n")
	}
	b.WriteString("\n" + msg)
	return []byte(b.String())
}

// dropEntries is data without the entries drop names, and how many went;
// data itself when none was there.
func dropEntries(data []byte, drop map[string]bool) ([]byte, int) {
	if data == nil {
		return nil, 0
	}
	f := memfile.Parse(data)
	kept := f.Entries[:0:0]
	for _, e := range f.Entries {
		if !drop[e.ID] {
			kept = append(kept, e)
		}
	}
	n := len(f.Entries) - len(kept)
	if n == 0 {
		return data, 0
	}
	f.Entries = kept
	return f.Render(), n
}

// dropConflicts is a conflict log without the records of drop's entries;
// data itself when none was there.
func dropConflicts(data []byte, drop map[string]bool) []byte {
	if data == nil {
		return nil
	}
	rs, err := merge.ParseLog("", data)
	if err != nil {
		return data
	}
	kept := slices.DeleteFunc(slices.Clone(rs), func(r merge.Record) bool { return drop[r.ID] })
	if len(kept) == len(rs) {
		return data
	}
	return merge.EncodeLog(kept)
}

// withTombstones is a merge's result next with the tombstones of both
// sides (live's and theirs'), and without the entries they name.
func withTombstones(next Files, live, theirs Files) Files {
	tomb := parsePurged(live.Purged)
	for id := range parsePurged(theirs.Purged) {
		tomb[id] = true
	}
	next.Purged = encodePurged(tomb)
	if len(tomb) > 0 {
		next.Memory, _ = dropEntries(next.Memory, tomb)
		next.Archive, _ = dropEntries(next.Archive, tomb)
		next.Conflicts = dropConflicts(next.Conflicts, tomb)
	}
	return next
}

// savePurged writes the tombstones data when they are not old; the caller
// holds the writers' lock.
func (h *History) savePurged(old, data []byte) error {
	if bytes.Equal(old, data) || data == nil {
		return nil
	}
	path := PurgedPath(h.Repo)
	if err := fsutil.MkdirAll(filepath.Dir(path), h.Store.DirPerm()); err != nil {
		return err
	}
	return fsutil.WriteFile(path, data, h.Store.FilePerm())
}

// scanMerged refuses a merge whose result brings an entry holding a secret
// (res.Changes and res.ArchiveChanges: what the other side adds or
// changes), naming the snapshot it came from.
func scanMerged(res *MergeResult, source string) error {
	err := joinSecrets(scanChanges(MemoryName, res.Changes), scanChanges(ArchiveName, res.ArchiveChanges))
	if se := new(SecretError); errors.As(err, &se) {
		se.Snapshot, se.Source = res.Theirs, source
	}
	return err
}
