package worktree

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/provenance"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/internal/textdiff"
	"github.com/memsync/memsync/internal/words"
	"github.com/memsync/memsync/memfile"
)

// FoldResult is what Fold did.
type FoldResult struct {
	Added  int    // entries of the copy that the memory did not have
	Edited int    // entries of the memory replaced by the copy's version (edits)
	Backup string // the copy's bytes are kept here; "" when the memory already had all of it
	// Withheld are the entries of the copy that hold a secret
	// (memfile.CheckSecrets): not folded in, kept only in Backup, each
	// reported through the store's Warn.
	Withheld []memfile.Entry
	// Gone are the IDs of the copy's entries the memory took out before
	// (store.Store.Gone): not folded back in.
	Gone []string

	folded []byte // the copy as Fold read it
}

// BackupStamp is the time part of a backup file's name.
func BackupStamp() string { return time.Now().UTC().Format("20060102T150405.000000000") }

// errNoChange makes Store.Update skip the rewrite.
var errNoChange = errors.New("no change")

// Fold merges a regular-file copy of the memory (a worktree's diverged
// .agent/memories.md) into the memory home, by entry ID, under the writers'
// lock: entries only in the copy are appended, entries with an ID the memory
// has are not duplicated (entries without a stored ID have one derived from
// their text, so identical text counts as the same entry). A store that
// dedups (one with a StateDir, as memsync.Open builds) also skips an entry
// whose content the memory already holds, active or archived, where the
// entry's session sees it (the rule of store.Store.Add). When the copy holds
// anything the memory lacks word for word (a new entry, or another version of
// one), its bytes are first kept in backup ("" means <copy>.bak-<time> beside
// it, or a backup there that holds those bytes already). The copy itself is left in place for the caller to replace. A symlink
// is refused: Fold never reads or writes through one. Fold records no
// provenance; the folds of a worktree's copy do (see fold). An entry of the
// copy that holds a secret is not folded in: it stays in the backup, and the
// store's Warn names it, the rule and the backup (FoldResult.Withheld).
func Fold(s *store.Store, copyPath, backup string) (FoldResult, error) {
	return fold(s, copyPath, backup, false, provenance.Info{})
}

// fold is Fold; with edits, an entry of the copy whose ID the memory has
// with other text replaces it (the copy is an edit of the memory: an
// editor or sed -i that saved by renaming over the link). An entry it
// appends that records no provenance gets from (Repo.writer).
func fold(s *store.Store, copyPath, backup string, edits bool, from provenance.Info) (FoldResult, error) {
	var res FoldResult
	fi, err := os.Lstat(copyPath)
	if err != nil {
		return res, fmt.Errorf("worktree: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return res, fmt.Errorf("worktree: %s is not a regular file; nothing to fold", copyPath)
	}
	data, err := os.ReadFile(copyPath)
	if err != nil {
		return res, fmt.Errorf("worktree: %w", err)
	}
	res.folded = data
	copied := memfile.Parse(data)
	err = s.Update(func(f *memfile.File) error {
		if covered(f, copied) {
			return errNoChange
		}
		switch kept := keptAlready(copyPath, data); {
		case backup == "" && kept != "":
			backup = kept // the same bytes were kept before (a branch's tracked file, folded by every command)
		default:
			if backup == "" {
				backup = copyPath + ".bak-" + BackupStamp()
			}
			if err := fsutil.WriteFile(backup, data, s.FilePerm()); err != nil {
				return fmt.Errorf("worktree: keep a backup of the copy: %w", err)
			}
		}
		res.Backup = backup
		var stored []*memfile.File
		if s.StateDir != "" {
			archive, err := readArchive(s)
			if err != nil {
				return err
			}
			stored = []*memfile.File{f, archive}
		}
		clean := *copied
		clean.Entries, res.Withheld = withholdSecrets(f, copied.Entries)
		for i := range res.Withheld {
			if s.Warn != nil {
				s.Warn(fmt.Sprintf("%s: the entry %s was not folded into the memory: %v; it is kept in %s",
					copyPath, res.Withheld[i].ID, memfile.CheckSecrets(&res.Withheld[i]), backup))
			}
		}
		gone, err := s.Gone()
		if err != nil {
			return err
		}
		clean.Entries, res.Gone = withoutGone(f, clean.Entries, gone)
		if len(res.Gone) > 0 && s.Warn != nil {
			s.Warn(fmt.Sprintf("%s: %d entr%s not folded back into the memory, removed from it before (deleted, purged or merged away): %s",
				copyPath, len(res.Gone), words.Plural(len(res.Gone), "y", "ies"), strings.Join(res.Gone, ", ")))
		}
		edited := 0
		if edits {
			edited = replaceEdited(f, &clean)
		}
		if res.Added = union(f, &clean, stored, from); res.Added+edited == 0 {
			return errNoChange
		}
		res.Edited = edited
		return nil
	})
	if err != nil && !errors.Is(err, errNoChange) {
		return res, err
	}
	return res, nil
}

// keptAlready returns a backup beside copyPath (<copy>.bak-<time>, a
// regular file) that holds data byte for byte, "" when there is none: a
// copy that stays where it is (a file the branch tracks, which git keeps)
// is folded again by every command, and is backed up once.
func keptAlready(copyPath string, data []byte) string {
	dir, prefix := filepath.Dir(copyPath), filepath.Base(copyPath)+".bak-"
	names, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, d := range names {
		if !d.Type().IsRegular() || !strings.HasPrefix(d.Name(), prefix) {
			continue
		}
		p := filepath.Join(dir, d.Name())
		if fi, err := d.Info(); err != nil || fi.Size() != int64(len(data)) {
			continue
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Equal(b, data) {
			return p
		}
	}
	return ""
}

// withholdSecrets splits entries into those without a secret and those with
// one that dst does not hold word for word.
func withholdSecrets(dst *memfile.File, entries []memfile.Entry) (clean, withheld []memfile.Entry) {
	have := make(map[string]string, len(dst.Entries))
	for i := range dst.Entries {
		have[dst.Entries[i].ID] = memfile.RenderEntry(&dst.Entries[i], memfile.Orch)
	}
	for _, e := range entries {
		if memfile.CheckSecrets(&e) != nil {
			if r, ok := have[e.ID]; !ok || r != memfile.RenderEntry(&e, memfile.Orch) {
				withheld = append(withheld, e)
			}
		} else {
			clean = append(clean, e)
		}
	}
	return clean, withheld
}

// withoutGone drops the entries whose ID is gone and dst lacks, and returns
// the rest and the IDs dropped.
func withoutGone(dst *memfile.File, entries []memfile.Entry, gone map[string]bool) (kept []memfile.Entry, dropped []string) {
	if len(gone) == 0 {
		return entries, nil
	}
	have := make(map[string]bool, len(dst.Entries))
	for i := range dst.Entries {
		have[dst.Entries[i].ID] = true
	}
	for _, e := range entries {
		if gone[e.ID] && !have[e.ID] {
			dropped = append(dropped, e.ID)
			continue
		}
		kept = append(kept, e)
	}
	return kept, dropped
}

// replaceEdited replaces each entry of dst by the entry of src with its ID
// where the two differ, and returns how many.
func replaceEdited(dst, src *memfile.File) int {
	at := make(map[string]int, len(dst.Entries))
	for i := range dst.Entries {
		at[dst.Entries[i].ID] = i
	}
	n := 0
	for _, e := range src.Entries {
		i, ok := at[e.ID]
		if ok && memfile.RenderEntry(&dst.Entries[i], memfile.Orch) != memfile.RenderEntry(&e, memfile.Orch) {
			dst.Entries[i] = e
			n++
		}
	}
	return n
}

// writer is the provenance of the entries a fold finds only in the copy
// of the worktree whose top is top: this machine's git user (who wrote
// them there), the worktree's branch and commit; the agent is not known.
func writer(r *Repo, top string) provenance.Info {
	info := provenance.Current(provenance.Where{CommonDir: r.CommonDir, GitDir: provenance.GitDir(top), Primary: r.Primary, WorkTree: top}, os.Getenv)
	info.Agent = ""
	return info
}

// newer tells whether the file at path changed after the memory file did:
// a copy written since the memory's last write is an edit of it.
func newer(path, memory string) bool {
	a, err1 := os.Stat(path)
	b, err2 := os.Stat(memory)
	return err1 == nil && err2 == nil && !a.ModTime().Before(b.ModTime())
}

// covered reports whether every entry of src is in dst, word for word, and
// src has no damage: replacing src then loses nothing.
func covered(dst, src *memfile.File) bool {
	if len(src.Problems) > 0 {
		return false
	}
	have := make(map[string]string, len(dst.Entries))
	for i := range dst.Entries {
		have[dst.Entries[i].ID] = memfile.RenderEntry(&dst.Entries[i], memfile.Orch)
	}
	for i := range src.Entries {
		if r, ok := have[src.Entries[i].ID]; !ok || r != memfile.RenderEntry(&src.Entries[i], memfile.Orch) {
			return false
		}
	}
	return true
}

// union appends to dst the entries of src whose ID dst lacks, and that no
// entry of stored says already (memfile.Dups: the same content in the
// entry's session view), in src's order, and returns how many. An appended
// entry without provenance gets from's. (A full 3-way merge by entry is the
// merge package's job; a worktree copy only ever needs this union.)
func union(dst, src *memfile.File, stored []*memfile.File, from provenance.Info) int {
	have := make(map[string]bool, len(dst.Entries))
	for _, e := range dst.Entries {
		have[e.ID] = true
	}
	var dups memfile.Dups
	for _, f := range stored {
		for i := range f.Entries {
			dups.Add(&f.Entries[i])
		}
	}
	n := 0
	for _, e := range src.Entries {
		if have[e.ID] || dups.Find(&e) != nil {
			continue
		}
		have[e.ID] = true
		from.Stamp(&e)
		dst.Entries = append(dst.Entries, e)
		if stored != nil {
			dups.Add(&e)
		}
		n++
	}
	return n
}

// readArchive reads the archive as it is on disk (the caller holds the
// writers' lock).
func readArchive(s *store.Store) (*memfile.File, error) {
	target, err := s.Resolve(s.ArchivePath())
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(target)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	return memfile.Parse(data), nil
}

// Diff shows how the regular-file copy at copyPath differs from the memory
// home's file, line by line ("-" only in the memory, "+" only in the copy,
// with a few lines of context: textdiff.Lines). It is "" when they are equal.
func Diff(s *store.Store, copyPath string) (string, error) {
	home, err := readHomeFile(s)
	if err != nil {
		return "", err
	}
	mine, err := os.ReadFile(copyPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("worktree: %w", err)
	}
	return textdiff.Lines(string(home), string(mine)), nil
}
