#!/bin/sh
# Fails if README.md grows past 400 lines (reference material belongs in
# doc/), or if a relative Markdown link in README.md or doc/*.md points to a
# file that does not exist, or to a `#anchor` that no heading of its target
# produces.
#
# Anchors are made as GitHub makes them: the heading's text lowercased,
# every character but letters, digits, spaces, '-' and '_' dropped, each
# space turned into '-', and "-1", "-2", ... added to repeats. Headings and
# links inside fenced code blocks or `code spans` do not count. One awk
# reads every page, so the check takes a moment however busy the machine is.
root="${IPCLOCK_SOURCE_ROOT:-$(dirname "$0")/..}"
cd "$root" || exit 1
max_lines=400

failed=0
lines=$(wc -l < README.md)
if [ "$lines" -gt "$max_lines" ]; then
  echo "README.md has $lines lines, more than $max_lines: move reference material to doc/"
  failed=1
fi

pages=$(echo README.md doc/*.md)
# Prints "H <page> <anchor>" for each heading and "L <page>:<line> <path>
# <anchor>" for each relative link (its path resolved from the tree's top;
# its anchor "-" for none).
# shellcheck disable=SC2016 # the awk program is awk's, not the shell's
scan='
  function normalize(path,   n, part, out, i, k) {
    n = split(path, part, "/"); k = 0
    for (i = 1; i <= n; i++) {
      if (part[i] == "" || part[i] == ".") continue
      if (part[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
      out[++k] = part[i]
    }
    path = ""
    for (i = 1; i <= k; i++) path = path (i > 1 ? "/" : "") out[i]
    return path == "" ? "." : path
  }
  FNR == 1 { fenced = 0; delete seen; dir = FILENAME; sub(/[^\/]*$/, "", dir) }
  /^```/ { fenced = !fenced; next }
  fenced { next }
  /^#+ / {
    a = tolower($0); sub(/^#+ +/, "", a); sub(/ +#* *$/, "", a)
    gsub(/[^a-z0-9 _\200-\377-]/, "", a); gsub(/ /, "-", a)
    if (a in seen) { seen[a]++; a = a "-" seen[a] } else seen[a] = 0
    print "H", FILENAME, a
  }
  {
    line = $0
    gsub(/`[^`]*`/, "", line)
    while ((i = index(line, "](")) > 0) {
      line = substr(line, i + 2)
      end = index(line, ")"); if (end == 0) break
      target = substr(line, 1, end - 1); sub(/ .*/, "", target)
      line = substr(line, end + 1)
      if (target ~ /^[a-zA-Z][a-zA-Z0-9+.-]*:/) continue  # http:, mailto:, ...
      path = target; sub(/#.*/, "", path)
      a = "-"; if (index(target, "#") > 0) { a = target; sub(/^[^#]*#/, "", a) }
      path = (path == "") ? FILENAME : normalize(dir path)
      print "L", FILENAME ":" FNR, path, a
    }
  }'
# shellcheck disable=SC2086 # one page per word: the page names have no spaces
found=$(LC_ALL=C awk "$scan" $pages)

# The headings of pages that links point to but that are not among those
# read.
extra=$(echo "$found" | awk '$1 == "L" && $4 != "-" { print $3 }' | sort -u |
  while read -r path; do
    case " $pages " in *" $path "*) ;; *) [ -f "$path" ] && echo "$path" ;; esac
  done)
if [ -n "$extra" ]; then
  # shellcheck disable=SC2086
  found="$found
$(LC_ALL=C awk "$scan" $extra | grep '^H ')"
fi

missing=$(echo "$found" | awk '$1 == "L" { print $3 }' | sort -u |
  while read -r path; do [ -e "$path" ] || echo "$path"; done)
bad=$(printf '%s\n--\n%s\n' "$missing" "$found" | awk '
  !past && $0 == "--" { past = 1; next }
  !past { if ($0 != "") missing[$0] = 1; next }
  $1 == "H" { heading[$2 " " $3] = 1; next }
  $1 == "L" { link[++n] = $2 " " $3 " " $4 }
  END {
    for (i = 1; i <= n; i++) {
      split(link[i], f, " ")
      if (f[2] in missing) print f[1] ": " f[2] ": no such file"
      else if (f[3] != "-" && f[2] ~ /\.md$/ && !((f[2] " " f[3]) in heading))
        print f[1] ": " f[2] "#" f[3] ": no heading makes this anchor"
    }
  }')
if [ -n "$bad" ]; then
  echo "broken links:"
  echo "$bad"
  failed=1
fi

if [ "$failed" -ne 0 ]; then
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
