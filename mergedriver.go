package memsync

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/internal/termsafe"
	"github.com/memsync/memsync/internal/words"
	"github.com/memsync/memsync/memfile"
)

// RunMergeDriver is memsync's git merge driver (Init with
// InitOptions.MergeDriver sets it up; git runs it as 'memsync merge-driver
// %O %A %B %P'): it merges the memory files base, ours and theirs entry by
// entry and writes the result over ours; a version git does not have is an
// empty file. Entries edited differently on both sides are written between
// conflict markers, said on stderr (path names the file for people), and
// counted: git takes a count above 0 for a conflict.
func RunMergeDriver(base, ours, theirs, path string, stderr io.Writer) (conflicts int, err error) {
	var data [3][]byte
	for i, p := range []string{base, ours, theirs} {
		if data[i], err = os.ReadFile(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
	}
	o, t := memfile.Parse(data[1]), memfile.Parse(data[2])
	r := merge.Merge(merge.State{Active: memfile.Parse(data[0]).Entries}, merge.State{Active: o.Entries}, merge.State{Active: t.Entries})
	f := o
	if len(data[1]) == 0 {
		f = t
	}
	if len(f.Entries) == 0 && f.Preamble == "" && len(r.Active) > 0 {
		f.Preamble = memfile.Header + "\n"
	}
	f.Entries, f.Problems = r.Active, nil
	if err := fsutil.WriteFile(ours, merge.RenderMarked(f, r.Conflicts), 0o644); err != nil {
		return 0, err
	}
	if n := len(r.Conflicts); n > 0 {
		fmt.Fprintf(stderr, "memsync: %s: %d entr%s edited differently on both sides, written between conflict markers;\n"+
			"hint: 'memsync doctor --fix' merges them by entry (ours kept, theirs recorded for 'memsync conflicts')\n", termsafe.Line(path), n, words.Plural(n, "y", "ies"))
	}
	return len(r.Conflicts), nil
}
