package history

import (
	"container/heap"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// A commit's paint in mergeBaseWalk.
const (
	paintA      = 1 << iota // reached from a
	paintOthers             // reached from others
	paintStale              // an ancestor of a common ancestor found: none better
	paintResult             // a common ancestor found
)

// maxBaseWalk bounds the commits mergeBaseWalk reads: a sync's heads are a
// few snapshots apart, and a longer walk is git's (it has the commit-graph).
const maxBaseWalk = 2000

// mergeBaseWalk is git merge-base a others... without starting git, where
// the answer is plain: it paints the history down from a and from others,
// newest commit first, as git does without a commit-graph, and answers
// when it finds one best common ancestor or none within maxBaseWalk
// commits. ok is false otherwise (several best ones, a longer walk, a
// commit it cannot read, a shallow clone or replaced objects): then git
// is asked. others is not empty.
func (h *History) mergeBaseWalk(a string, others []string) (base string, ok bool) {
	for _, o := range others {
		if o == a {
			return a, true
		}
	}
	for _, p := range []string{"shallow", "refs/replace"} {
		if _, err := os.Lstat(filepath.Join(h.Repo.CommonDir, p)); err == nil {
			return "", false
		}
	}
	w := baseWalk{nodes: map[plumbing.Hash]*baseNode{}}
	start := func(hash string, flags int) bool {
		n := w.node(h, plumbing.NewHash(hash))
		if n == nil {
			return false
		}
		n.flags |= flags
		heap.Push(&w, n)
		return true
	}
	if !start(a, paintA) {
		return "", false
	}
	for _, o := range others {
		if !start(o, paintOthers) {
			return "", false
		}
	}
	var results []*baseNode
	for w.nonStale() {
		n := heap.Pop(&w).(*baseNode)
		flags := n.flags & (paintA | paintOthers | paintStale)
		if flags == paintA|paintOthers {
			if n.flags&paintResult == 0 {
				n.flags |= paintResult
				results = append(results, n)
			}
			flags |= paintStale
		}
		for _, ph := range n.c.parents {
			p := w.node(h, ph)
			if p == nil || len(w.nodes) > maxBaseWalk {
				return "", false
			}
			if p.flags&flags == flags {
				continue
			}
			p.flags |= flags
			heap.Push(&w, p)
		}
	}
	base = ""
	for _, n := range results {
		if n.flags&paintStale != 0 {
			continue // an ancestor of another result
		}
		if base != "" {
			return "", false // several: git chooses
		}
		base = n.c.hash.String()
	}
	return base, true
}

// baseNode is a commit of mergeBaseWalk with its paint.
type baseNode struct {
	c     *commitInfo
	when  int64 // committer time
	flags int
}

// baseWalk is mergeBaseWalk's commits read so far and its queue, a heap
// of the newest first.
type baseWalk struct {
	nodes map[plumbing.Hash]*baseNode
	queue []*baseNode
}

// node is commit hash's node, read at its first use; nil when it cannot
// be read.
func (w *baseWalk) node(h *History, hash plumbing.Hash) *baseNode {
	if n, ok := w.nodes[hash]; ok {
		return n
	}
	c, err := readCommit(h.st, hash)
	if err != nil {
		return nil
	}
	n := &baseNode{c: c, when: c.when().Unix()}
	w.nodes[hash] = n
	return n
}

// nonStale tells whether the queue holds a commit not yet known to be an
// ancestor of a common ancestor: the walk goes on while it does.
func (w *baseWalk) nonStale() bool {
	for _, n := range w.queue {
		if n.flags&paintStale == 0 {
			return true
		}
	}
	return false
}

func (w *baseWalk) Len() int           { return len(w.queue) }
func (w *baseWalk) Less(i, j int) bool { return w.queue[i].when > w.queue[j].when }
func (w *baseWalk) Swap(i, j int)      { w.queue[i], w.queue[j] = w.queue[j], w.queue[i] }
func (w *baseWalk) Push(x any)         { w.queue = append(w.queue, x.(*baseNode)) }
func (w *baseWalk) Pop() any {
	n := w.queue[len(w.queue)-1]
	w.queue = w.queue[:len(w.queue)-1]
	return n
}
