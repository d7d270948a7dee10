#!/usr/bin/env bash
# Checks that keep the man pages (man/) true to what is built and installed:
#
#   man_check.sh installed BUILD-DIR
#       install BUILD-DIR into a temporary prefix: every installed program has a page
#       in man1 or man8, rdlm.3 is there, and groff renders every installed page
#       (`.so` links included) without a warning (-ww);
#   man_check.sh options TOOL PAGE [NOT-OPTION...]
#       every option TOOL --help lists appears in PAGE's OPTIONS section, and every
#       option the section describes appears in TOOL --help (the pages cannot drift);
#       NOT-OPTIONs are words of TOOL --help that are another program's flags (the
#       launcher's in `mpirun -np N TOOL`), left out; each must be in TOOL --help;
#   man_check.sh variables RDLM_INFO PAGE
#       every RDLM_* variable of `rdlm_info --config-markdown` is named in PAGE.
#
# Pages are compared as `man` renders them (groff -man -Tutf8, plain text), not as
# roff source.
# Exit 0 when it holds; 1 with "FAIL: ..." lines saying what differs; 2 on bad usage.
set -euo pipefail

fail() { echo "FAIL: $*"; exit 1; }
render() { groff -man -Tutf8 -P-cbou "$1" 2>/dev/null; }

# Option names (-x, --name) in the text on stdin, sorted, one per line.
options_in() { grep -oE '(^|[^[:alnum:]_-])--?[[:alpha:]][[:alnum:]-]*' | sed -E 's/^[^-]*//' | sort -u; }

# The OPTIONS section of a rendered page: the item heads only (7 columns in).
page_options() {
  render "$1" | awk '/^[A-Z]/ { in_opts = ($0 == "OPTIONS") ; next }
                     in_opts && /^       -/' | options_in
}

check_installed() {
  local build=$1 tmp prog page missing=0 out
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" ||
    fail "cmake --install $build failed: $(tail -1 "$tmp/install.log")"
  local man=$tmp/prefix/share/man
  [ -d "$man" ] || fail "nothing installed under share/man"
  for prog in "$tmp"/prefix/bin/*; do
    [ -e "$prog" ] || continue
    page=$(basename "$prog")
    if [ ! -f "$man/man1/$page.1" ] && [ ! -f "$man/man8/$page.8" ]; then
      echo "FAIL: bin/$page is installed without a page (man1/$page.1 or man8/$page.8)"
      missing=1
    fi
  done
  [ -f "$man/man3/rdlm.3" ] || { echo "FAIL: man3/rdlm.3 is not installed"; missing=1; }
  for page in "$man"/man*/*; do
    out=$(cd "$man" && groff -man -Tutf8 -ww -z "${page#"$man"/}" 2>&1) || true
    if [ -n "$out" ]; then
      echo "FAIL: ${page#"$man"/} renders with warnings:"
      echo "$out"
      missing=1
    fi
  done
  [ $missing -eq 0 ] || exit 1
  echo "installed: $(ls "$tmp"/prefix/bin | wc -l) programs, $(ls "$man"/man* | grep -c .) pages, all rendered cleanly"
}

check_options() {
  local tool=$1 page=$2 help_opts page_opts only_help only_page word
  shift 2
  help_opts=$("$tool" --help | options_in)
  for word in "$@"; do
    grep -qxF -- "$word" <<< "$help_opts" ||
      fail "$word is not in $(basename "$tool") --help: drop it from the words left out"
    help_opts=$(grep -vxF -- "$word" <<< "$help_opts" || true)
  done
  page_opts=$(page_options "$page")
  [ -n "$help_opts" ] || fail "$tool --help lists no option"
  [ -n "$page_opts" ] || fail "$page has no OPTIONS section with items"
  only_help=$(comm -23 <(echo "$help_opts") <(echo "$page_opts") | tr '\n' ' ')
  only_page=$(comm -13 <(echo "$help_opts") <(echo "$page_opts") | tr '\n' ' ')
  [ -z "$only_help" ] || echo "FAIL: in $(basename "$tool") --help, not in the page $(basename "$page"): $only_help"
  [ -z "$only_page" ] || echo "FAIL: in the page $(basename "$page"), not in $(basename "$tool") --help: $only_page"
  [ -z "$only_help$only_page" ] || exit 1
  echo "$(basename "$page"): the same $(echo "$help_opts" | wc -l) options as $(basename "$tool") --help"
}

check_variables() {
  local info=$1 page=$2 text var missing=""
  text=$(render "$page")
  for var in $("$info" --config-markdown | grep -oE '^\| `RDLM_[A-Z_]+`' | tr -d '|` '); do
    grep -qw -- "$var" <<< "$text" || missing+="$var "
  done
  [ -z "$missing" ] || fail "$(basename "$page") does not name: $missing"
  echo "$(basename "$page") names every configuration variable"
}

case ${1:-} in
installed) [ $# -eq 2 ] || exit 2; check_installed "$2" ;;
options) [ $# -ge 3 ] || exit 2; shift; check_options "$@" ;;
variables) [ $# -eq 3 ] || exit 2; check_variables "$2" "$3" ;;
*) echo "usage: man_check.sh installed BUILD | options TOOL PAGE [NOT-OPTION...] | variables RDLM_INFO PAGE" >&2; exit 2 ;;
esac
