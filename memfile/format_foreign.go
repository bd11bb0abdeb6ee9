package memfile

import (
	"fmt"
	"strings"
)

// ParseFrontMatter reads one entry of the front-matter layout: YAML front matter
// (key, tags as a block or flow list, created_at, updated_at; other keys are
// ignored) and a markdown body whose first heading becomes the title. The
// entry's first Extra field is its Key (possibly empty), then Updated.
func ParseFrontMatter(data []byte) (Entry, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	rest := strings.TrimPrefix(text, "---\n")
	head, body, ok := strings.Cut(rest, "\n---")
	if !ok {
		return Entry{}, fmt.Errorf("front matter has no closing '---'")
	}
	body = strings.TrimPrefix(strings.TrimLeft(body, "-"), "\n")
	meta := map[string]string{}
	var tags []string
	listKey := ""
	for _, l := range strings.Split(head, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if strings.HasPrefix(t, "- ") && listKey != "" {
			if listKey == "tags" {
				tags = append(tags, unquote(strings.TrimSpace(t[2:])))
			}
			continue
		}
		k, v, ok := strings.Cut(t, ":")
		if !ok {
			return Entry{}, fmt.Errorf("front matter: cannot read %q", t)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		listKey = ""
		switch {
		case v == "":
			listKey = k
		case k == "tags" && strings.HasPrefix(v, "["):
			for _, x := range strings.Split(strings.Trim(v, "[]"), ",") {
				if x = unquote(strings.TrimSpace(x)); x != "" {
					tags = append(tags, x)
				}
			}
		case k == "tags":
			tags = append(tags, splitTags(v)...)
		default:
			meta[k] = unquote(v)
		}
	}
	e := Entry{Tags: tags, Date: datePart(meta["created_at"])}
	body = strings.TrimSpace(body)
	if first, after, _ := strings.Cut(body, "\n"); strings.HasPrefix(first, "#") {
		e.Title = strings.TrimSpace(strings.TrimLeft(first, "#"))
		body = strings.TrimSpace(after)
	}
	e.Content = body
	if e.Content == "" {
		e.Content = e.Title
	}
	if e.Title == "" {
		e.Title = TitleFrom(e.Content)
	}
	if e.Title == "" {
		e.Title = meta["key"]
	}
	if e.Content == "" {
		e.Content = meta["key"]
	}
	e.Extra = []Field{{"Key", meta["key"]}}
	if u := meta["updated_at"]; u != "" {
		e.Extra = append(e.Extra, Field{"Updated", u})
	}
	return e, nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// datePart turns "2024-01-15T10:30:00" into "2024-01-15".
func datePart(ts string) string {
	if len(ts) >= 10 && ts[4] == '-' && ts[7] == '-' {
		return ts[:10]
	}
	return ts
}
