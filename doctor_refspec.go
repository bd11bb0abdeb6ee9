package memsync

import (
	"context"
	"fmt"
	"strings"

	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/gitconfig"
)

// memsyncRefs are refs a remote's fetch refspec must not map onto this
// clone's refs/memsync/: the team's shared snapshots and a clone's.
var memsyncRefs = []string{"refs/memsync/snapshots", "refs/memsync/clones/x"}

// checkRefspecs reports each remote whose fetch refspecs map the remote's
// refs/memsync/ onto this clone's (+refs/*:refs/*, as git clone --mirror
// sets): a plain git fetch would then overwrite the clone's snapshots with
// the remote's, and the next snapshot take what the remote lacks as
// deleted. memsync's own fetch is safe (it ignores the configured
// refspecs); with fix, the remote gets the negative refspec that keeps
// git's fetch off refs/memsync/.
func (m *Memory) checkRefspecs(ctx context.Context, fix bool) []Check {
	dir := m.repo.CommonDir
	names, specs := gitconfig.Repo(dir, m.repo.GitDir).Subsections("remote", "fetch")
	var checks []Check
	for _, name := range names {
		spec, onto := overwrites(specs[name])
		if spec == "" {
			continue
		}
		neg := "^refs/memsync/*"
		ch := Check{Check: "refspec", Status: checkProblem, Fixable: true,
			Detail: fmt.Sprintf("remote %s's fetch refspec %s maps its %s onto this clone's: a plain git fetch %s would overwrite this clone's snapshots", name, spec, onto, name),
			Fix:    fmt.Sprintf("git config --add remote.%s.fetch '%s' (memsync doctor --fix)", name, neg)}
		if fix {
			if _, err := gitcmd.OutputContext(ctx, dir, "--git-dir="+dir, "config", "--add", "remote."+name+".fetch", neg); err != nil {
				ch.Detail += " (repair failed: " + err.Error() + ")"
			} else {
				ch.Status, ch.Detail = checkFixed, fmt.Sprintf("remote %s: added the fetch refspec %s, which keeps git fetch off refs/memsync/ (%s mapped them onto this clone's)", name, neg, spec)
			}
		}
		checks = append(checks, ch)
	}
	return checks
}

// overwrites returns the first of a remote's fetch refspecs that maps one
// of memsyncRefs onto a ref under refs/memsync/, and that ref, unless a
// negative refspec of the remote excludes it; "" when none does.
func overwrites(specs []string) (spec, ref string) {
	for _, ref := range memsyncRefs {
		excluded := false
		for _, s := range specs {
			if p, ok := strings.CutPrefix(s, "^"); ok && matchRef(p, ref) {
				excluded = true
			}
		}
		if excluded {
			continue
		}
		for _, s := range specs {
			src, dst, ok := strings.Cut(strings.TrimPrefix(s, "+"), ":")
			if !ok || strings.HasPrefix(s, "^") {
				continue
			}
			if to, ok := mapRef(src, dst, ref); ok && strings.HasPrefix(to, "refs/memsync/") {
				return s, ref
			}
		}
	}
	return "", ""
}

// matchRef tells whether ref matches a refspec side: the same ref, or a
// pattern with one '*'.
func matchRef(pattern, ref string) bool {
	_, ok := mapRef(pattern, pattern, ref)
	return ok
}

// mapRef maps ref through the refspec src:dst, as git does (a '*' in src
// stands for any string, put in dst's '*').
func mapRef(src, dst, ref string) (string, bool) {
	pre, post, star := strings.Cut(src, "*")
	if !star {
		return dst, src == ref
	}
	if len(ref) < len(pre)+len(post) || !strings.HasPrefix(ref, pre) || !strings.HasSuffix(ref, post) {
		return "", false
	}
	mid := ref[len(pre) : len(ref)-len(post)]
	return strings.Replace(dst, "*", mid, 1), true
}
