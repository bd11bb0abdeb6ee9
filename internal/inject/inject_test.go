package inject

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memsync/memsync/internal/config"
	"github.com/memsync/memsync/memfile"
)

// TestBudgetOnLargeMemory: on a 2 MB memory, for many budgets, the block
// plus the task separator never exceeds the budget, every chosen entry is
// there whole (the block parses back to exactly the chosen entries), and the
// note counts exactly the candidates left out.
func TestBudgetOnLargeMemory(t *testing.T) {
	f := memfile.Parse(memfile.GenerateFile(2<<20, 7))
	if len(f.Entries) < 1000 {
		t.Fatalf("generated only %d entries", len(f.Entries))
	}
	noteRE := regexp.MustCompile(`^\((\d+) more memories left out by the budget; see them with 'memsync search WORDS' or 'memsync list'\)$`)
	for _, budget := range []int{150, 200, 500, 1000, 2000, 8000, 8001, 20000, 100000} {
		res := Select(f, Options{Budget: budget, Query: "retry timeout cache"})
		if got := len(res.Block) + len(TaskSeparator); got > budget {
			t.Fatalf("budget %d: block+separator is %d bytes", budget, got)
		}
		if res.Omitted+len(res.Chosen) != len(f.Entries) {
			t.Fatalf("budget %d: chosen %d + omitted %d != %d entries", budget, len(res.Chosen), res.Omitted, len(f.Entries))
		}
		if res.Block == "" {
			continue
		}
		lines := strings.Split(strings.TrimSuffix(res.Block, "\n"), "\n")
		m := noteRE.FindStringSubmatch(lines[len(lines)-1])
		if m == nil {
			t.Fatalf("budget %d: last line is no note: %q", budget, lines[len(lines)-1])
		}
		if n, _ := strconv.Atoi(m[1]); n != res.Omitted {
			t.Fatalf("budget %d: note says %d, omitted %d", budget, n, res.Omitted)
		}
		checkFramed(t, res.Prompt("Do it\n"), "Do it\n")
		for _, i := range res.Chosen {
			want := renderEntry(&f.Entries[i], "", "", time.Now(), "", false)
			if !strings.Contains(res.Block, "\n"+want) {
				t.Fatalf("budget %d: entry %d cut or changed; want\n%s", budget, i, want)
			}
		}
		if budget >= 2000 && len(res.Chosen) == 0 {
			t.Fatalf("budget %d: nothing chosen", budget)
		}
	}
}

func entry(typ, title, content, date string, tags ...string) memfile.Entry {
	return memfile.Entry{ID: memfile.NewID(), Type: typ, Title: title, Content: content, Date: date, Tags: tags}
}

func fileOf(es ...memfile.Entry) *memfile.File {
	return memfile.Parse([]byte(memfile.Header + "\n" + render(es)))
}

func render(es []memfile.Entry) string {
	var b strings.Builder
	for i := range es {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(memfile.RenderEntry(&es[i], memfile.Orch))
	}
	return b.String()
}

// TestRelevanceBeatsRecency: an old entry about the query's topic is kept
// over newer unrelated ones when only two fit.
func TestRelevanceBeatsRecency(t *testing.T) {
	es := []memfile.Entry{entry("pattern", "Postgres connection pool", "Set max_conns to 20 for the postgres pool; more starves the replicas", "2025-01-02", "database")}
	for i := range 30 {
		es = append(es, entry("pattern", fmt.Sprintf("Frontend note %d", i), fmt.Sprintf("Button colours follow the design tokens, variant %d", i), fmt.Sprintf("2026-03-%02d", i+1), "ui"))
	}
	f := fileOf(es...)
	size := len(renderEntry(&f.Entries[0], "", "", time.Now(), "", false))
	budget := frameSize(minFence) + len(Note(len(es), 0)) + 2 + 2*size + 1
	res := Select(f, Options{Budget: budget, Query: "why is the postgres pool limited?"})
	if len(res.Chosen) == 0 || res.Chosen[0] != 0 {
		t.Fatalf("chosen %v, want the postgres entry (0) first", res.Chosen)
	}
	// Without a query the newest win.
	res = Select(f, Options{Budget: budget})
	if len(res.Chosen) == 0 || res.Chosen[0] != len(es)-1 {
		t.Fatalf("no query: chosen %v, want the newest (%d) first", res.Chosen, len(es)-1)
	}
}

// TestCorrectionsGoLast: with equal relevance, an older fix is kept over a
// newer pattern.
func TestCorrectionsGoLast(t *testing.T) {
	f := fileOf(
		entry("fix", "Flaky login test", "Wait for the session cookie before asserting", "2026-01-01"),
		entry("pattern", "Naming", "Use verbs for commands and nouns for packages", "2026-02-01"),
	)
	size := len(renderEntry(&f.Entries[0], "", "", time.Now(), "", false))
	budget := frameSize(minFence) + len(Note(2, 0)) + 2 + size
	res := Select(f, Options{Budget: budget})
	if len(res.Chosen) != 1 || f.Entries[res.Chosen[0]].Type != "fix" || res.Omitted != 1 {
		t.Fatalf("chosen %v omitted %d, want the fix alone", res.Chosen, res.Omitted)
	}
}

// TestFilterAndDamage: the filter's drops are counted apart, and a file with
// invalid UTF-8 still gives valid UTF-8.
func TestFilterAndDamage(t *testing.T) {
	now := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	f := fileOf(
		entry("fix", "Old fix", "old", "2026-01-01", "api"),
		entry("fix", "New fix", "new \xff\xfe bytes", "2026-03-09", "api"),
		entry("pattern", "New pattern", "pat", "2026-03-09", "api"),
		entry("fix", "Other tag", "x", "2026-03-09", "ui"),
	)
	res := Select(f, Options{Filter: config.Filter{Types: []string{"Fix"}, Tags: []string{"API"}, RecentDays: 7}, Now: now})
	if len(res.Chosen) != 1 || f.Entries[res.Chosen[0]].Title != "New fix" || res.Filtered != 3 || res.Omitted != 0 {
		t.Fatalf("chosen %v filtered %d omitted %d", res.Chosen, res.Filtered, res.Omitted)
	}
	all := Select(f, Options{Filter: config.Filter{Tags: []string{"api", "ui"}, AllTags: []string{"API"}, RecentDays: 7}, Now: now})
	if len(all.Chosen) != 2 || all.Filtered != 2 {
		t.Fatalf("all tags: chosen %v filtered %d", all.Chosen, all.Filtered)
	}
	if !utf8.ValidString(res.Block) {
		t.Fatalf("block is not valid UTF-8: %q", res.Block)
	}
	if !strings.HasSuffix(res.Block, Note(0, 3)+"\n") {
		t.Fatalf("block does not end with the filter note:\n%s", res.Block)
	}
	if empty := Select(&memfile.File{}, Options{Budget: 100}); empty.Block != "" || empty.Prompt("p\n") != "p\n" {
		t.Fatalf("empty memory: %+v", empty)
	}
}

// TestShape: the memory block, the notice, the fenced entries, the task
// section once, after it.
func TestShape(t *testing.T) {
	now := time.Date(2026, 1, 29, 15, 0, 0, 0, time.UTC)
	f := fileOf(entry("pattern", "Error Handling", "Always use try-catch blocks for async operations", "2026-01-26", "pattern", "error-handling"))
	res := Select(f, Options{Now: now})
	want := "# Memories\n\n" + Notice + "```memories\n[" + f.Entries[0].ID + "] Pattern: Error Handling\n" +
		"    2026-01-26 (3 days old); tags: pattern, error-handling\n" +
		"    Always use try-catch blocks for async operations\n```\n\n---\n\n# Task\n\nDo it\n"
	if got := res.Prompt("Do it\n"); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestAuthorAndAge: the author field is shown, marked when it is not the
// git user; the age counts days from the entry's date.
func TestAuthorAndAge(t *testing.T) {
	now := time.Date(2026, 3, 10, 23, 59, 0, 0, time.UTC)
	mine := entry("fix", "Mine", "a", "2026-03-10")
	mine.SetField(AuthorField, "Ann Lee <Ann@Example.com>")
	theirs := entry("fix", "Theirs", "b", "2026-03-09")
	theirs.SetField(AuthorField, "Eve <eve@example.org>")
	theirs.SetField("Source", "https://example.org/x")
	unknown := entry("fix", "Unknown", "c", "2026-02-08")
	f := fileOf(mine, theirs, unknown)
	block := Select(f, Options{Now: now, User: "ann@example.com"}).Block
	for _, want := range []string{
		"    2026-03-10 (today); by Ann Lee <Ann@Example.com>\n",
		"    2026-03-09 (1 day old); by Eve <eve@example.org> (other author)\n    b\n    Source: https://example.org/x\n",
		"    2026-02-08 (30 days old)\n    c\n",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	if n := strings.Count(block, "other author)"); n != 1 {
		t.Errorf("%d entries marked, want 1:\n%s", n, block)
	}
	if strings.Contains(Select(f, Options{Now: now}).Block, "(other author)") {
		t.Error("no git user, yet an entry is marked")
	}
	for _, c := range []struct {
		author, user string
		other        bool
	}{{"A <a@x>", "a@x", false}, {"a@x", "A@X", false}, {"A <a@x>", "b@x", true}, {"A <a@x>", "", false}, {"<>", "a@x", true}} {
		if got := OtherAuthor(c.author, c.user); got != c.other {
			t.Errorf("OtherAuthor(%q, %q) = %v", c.author, c.user, got)
		}
	}
}

// TestMinSize: the cheap bound never exceeds the rendered size.
func TestMinSize(t *testing.T) {
	f := memfile.Parse(memfile.GenerateFile(256<<10, 3))
	f.Entries = append(f.Entries, entry("", "t", "", ""), entry("fix", "multi", "a\nb\n\nc\n\n", "2026-01-01", "x", "y"), entry("", "", "\n", ""))
	for i := range f.Entries {
		e := &f.Entries[i]
		if got, want := minSize(e, len(e.Content)), len(renderEntry(e, "", "", time.Now(), "", false)); got > want || want < minEntryBytes {
			t.Fatalf("entry %d: bound %d > size %d:\n%s", i, got, want, renderEntry(e, "", "", time.Now(), "", false))
		}
	}
}

// TestGlobalMark: entries Global names are marked "(global)" after their ID,
// and the mark counts against the budget: a budget that fits an entry
// exactly without the mark leaves it out with the mark.
func TestGlobalMark(t *testing.T) {
	f := fileOf(
		entry("pattern", "Project note", "The CI cache lives in .ci/cache", "2026-03-01"),
		entry("fix", "Go module cache", "Run go clean -modcache when checksums disagree", "2026-03-02"),
	)
	global := func(i int) bool { return i == 1 }
	res := Select(f, Options{Global: global})
	if len(res.Chosen) != 2 {
		t.Fatalf("chosen %v, want both", res.Chosen)
	}
	for i, e := range f.Entries {
		plain := "\n[" + e.ID + "] " + e.Heading() + "\n"
		marked := "\n[" + e.ID + "] (global) " + e.Heading() + "\n"
		if got := strings.Contains(res.Block, marked); got != global(i) {
			t.Errorf("entry %d: marked %v, want %v:\n%s", i, got, global(i), res.Block)
		}
		if got := strings.Contains(res.Block, plain); got == global(i) {
			t.Errorf("entry %d: unmarked heading %v:\n%s", i, got, res.Block)
		}
	}
	checkFramed(t, res.Prompt("task\n"), "task\n")

	only := func(int) bool { return true }
	one := fileOf(f.Entries[1])
	// The entry fits unmarked, with the note reserved, and not marked.
	budget := len(Select(one, Options{}).Block) + len(TaskSeparator) + len(Note(1, 0)) + 2
	if res := Select(one, Options{Budget: budget}); len(res.Chosen) != 1 {
		t.Fatalf("unmarked: chosen %v, want the entry", res.Chosen)
	}
	if res := Select(one, Options{Budget: budget, Global: only}); len(res.Chosen) != 0 || res.Omitted != 1 {
		t.Fatalf("marked: chosen %v omitted %d, want it left out by the budget", res.Chosen, res.Omitted)
	}
	if res := Select(one, Options{Budget: budget + len(GlobalMark) + 1, Global: only}); len(res.Chosen) != 1 ||
		len(res.Block)+len(TaskSeparator) > budget+len(GlobalMark)+1 {
		t.Fatalf("marked, room for the mark: chosen %v, block %d bytes", res.Chosen, len(res.Block))
	}
}

// TestSortByAge: the counting sort orders candidates (in file order) as
// byAge does: by date, then by position in the file.
func TestSortByAge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 150 {
		mode := n % 3
		var items []item
		for i := range r.IntN(300) {
			if r.IntN(3) > 0 {
				date := 20260100 + r.IntN(12) // few dates
				switch mode {
				case 1: // a decade, some undated
					date = (2020+r.IntN(10))*10000 + (1+r.IntN(12))*100 + 1 + r.IntN(31)
					if r.IntN(5) == 0 {
						date = 0
					}
				case 2: // centuries apart: sorted by comparison
					date = (1+r.IntN(9999))*10000 + 1231
				}
				items = append(items, item{i: int32(i), date: int32(date), size: int32(r.IntN(99))})
			}
		}
		want := slices.Clone(items)
		slices.SortFunc(want, byAge)
		sortByAge(items)
		if !slices.Equal(items, want) {
			t.Fatalf("sortByAge:\n%v\nwant\n%v", items, want)
		}
	}
}
