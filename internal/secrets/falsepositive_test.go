package secrets

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ordinaryMemories is the false-positive corpus: the hand-written entries of
// testdata/memories.md, the real entries of memfile/testdata (memory files of
// public repositories), and entries built around the identifiers engineering
// notes are full of: commit hashes, UUIDs, sha256 sums, digests, base64
// fixtures and URLs with query strings.
func ordinaryMemories(t *testing.T) []string {
	var out []string
	data, err := os.ReadFile("testdata/memories.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(data), "\n## ")[1:] {
		out = append(out, "## "+strings.TrimSpace(block))
	}
	real, err := filepath.Glob("../../memfile/testdata/ralph-*.md")
	if err != nil || len(real) == 0 {
		t.Fatalf("no real memory files: %v", err)
	}
	for _, p := range real {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range strings.Split(string(data), "\n### mem-")[1:] {
			if i := strings.Index(block, "\n## "); i >= 0 {
				block = block[:i]
			}
			out = append(out, strings.TrimSpace(block))
		}
	}
	f := newFaker(2)
	uuid := func() string {
		h := f.s(hexLower, 32)
		return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
	}
	sum := func() string {
		s := sha256.Sum256([]byte(f.s(alnum, 20)))
		return hex.EncodeToString(s[:])
	}
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString([]byte(f.s(alnum+" {}:,\"", n))) }
	templates := []func() string{
		func() string {
			return "Regression bisected to commit " + f.s(hexLower, 40) + "; reverting it makes TestSyncRace pass again."
		},
		func() string {
			return fmt.Sprintf("Fixed in %s (merge of #%d), cherry-picked to release-1.4 as %s.", f.s(hexLower, 7), 100+f.r.IntN(900), f.s(hexLower, 7))
		},
		func() string {
			return "Request " + uuid() + " failed with 502 at the gateway: the upstream timed out after 30s."
		},
		func() string {
			return "Tenant id " + uuid() + " is the demo tenant in the seed data; the e2e tests rely on it."
		},
		func() string { return "Release checksums.txt: " + sum() + "  memsync_linux_amd64.tar.gz" },
		func() string { return "Pin the base image by digest: FROM golang:1.26-alpine@sha256:" + sum() },
		func() string { return "go.sum: github.com/acme/lib v1.2." + f.s(digits, 1) + " h1:" + b64(30) },
		func() string {
			return "The webhook test fixture body is base64: " + b64(48) + " (decode it in the test, do not inline the JSON)."
		},
		func() string {
			return "Latency dashboard: https://grafana.acme.dev/d/" + f.s(lowerAlnum, 9) + "/api-latency?orgId=1&from=now-6h&to=now&var-service=checkout&refresh=30s"
		},
		func() string {
			return "Open bugs: https://github.com/acme/app/issues?q=is%3Aopen+label%3Abug+sort%3Aupdated-desc&page=" + f.s(digits, 1)
		},
		func() string {
			return "package-lock integrity for left-pad: sha512-" + base64.StdEncoding.EncodeToString([]byte(f.s(alnum, 64)))
		},
		func() string {
			return "The trace id " + f.s(hexLower, 32) + " spans the whole checkout request across 7 services."
		},
		func() string {
			return "schema_migrations records checksum " + sum() + " for 0042_add_index.sql; editing an applied migration breaks it."
		},
		func() string {
			return "Search API example: https://api.acme.dev/v2/search?q=memory+sync&limit=20&cursor=" + base64.RawURLEncoding.EncodeToString([]byte("offset:"+f.s(digits, 3)))
		},
	}
	for range 12 {
		for _, tmpl := range templates {
			out = append(out, tmpl())
		}
	}
	return out
}

func TestFalsePositiveCorpus(t *testing.T) {
	entries := ordinaryMemories(t)
	if len(entries) < 300 {
		t.Fatalf("the corpus has %d entries; it needs at least 300", len(entries))
	}
	alarms := 0
	for _, e := range entries {
		if fs := Scan(e); len(fs) > 0 {
			alarms++
			t.Errorf("false alarm %s (%s) in:\n%s", fs[0].RuleID, fs[0].Excerpt, e)
		}
	}
	t.Logf("false-positive corpus: %d ordinary memories, %d false alarms", len(entries), alarms)
}
