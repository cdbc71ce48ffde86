#!/usr/bin/env bash
# cli_html.sh — the release report (docs/report.md) rendered by headless
# Chromium: `anonymize --html` with Mondrian and l-diversity on Adult, with
# Incognito (suppression), with Rothko-T and Rothko-S out of core, and `anonkit report` of a
# file published earlier. For each document: a screenshot of the first screen
# that is not blank; the DOM Chromium dumped holds every section, every
# SHA-256 equals sha256sum's, every figure equals the --report JSON's
# (tests/html_check.py); nothing outside the file is referenced; the console
# shows no errors. Also: a value like <script> in the data appears escaped; a
# failed HTML write leaves every output path as it was.
#
# usage: bash tests/cli_html.sh PATH/TO/anonkit SOURCE_DIR
# Needs chromium (installed by scripts/deps.sh): without it every case fails.
set -u
source "$(dirname "$0")/cli_harness.sh" cli-html "$@"
CHECK=$SRC/tests/html_check.py
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)

# chrome MODE HTML OUT: runs headless Chromium on HTML in a fresh profile;
# MODE shot writes the first screen to OUT (a PNG), MODE dom the DOM to OUT
# and the console to OUT.log.
chrome() {
    if [ -z "$CHROMIUM" ]; then
        problem "chromium is not installed (scripts/deps.sh installs it)"
        return 1
    fi
    local profile tmp
    profile=$(mktemp -d "$T/profile.XXXXXX")
    tmp=$(mktemp -d "$T/chrome-tmp.XXXXXX")
    local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
                 --disable-component-update --disable-sync --disable-dev-shm-usage --user-data-dir="$profile"
                 --enable-logging=stderr --v=0 --window-size=1000,1300)
    if [ "$1" = shot ]; then
        TMPDIR=$tmp timeout 60 "$CHROMIUM" "${flags[@]}" --screenshot="$3" "file://$2" >/dev/null 2>"$3.log"
    else
        TMPDIR=$tmp timeout 60 "$CHROMIUM" "${flags[@]}" --dump-dom "file://$2" >"$3" 2>"$3.log"
    fi
    local rc=$?
    rm -rf "$profile" "$tmp"
    [ $rc -eq 0 ] || problem "chromium exited with $rc on $2"
    return $rc
}

# check_doc HTML JSON DIR [html_check.py options]: renders HTML, checks the
# screenshot, the DOM against JSON (paths relative to DIR) and the console.
check_doc() {
    local html=$1 json=$2 dir=$3
    shift 3
    [ -s "$html" ] || { problem "$html was not written"; return; }
    chrome shot "$html" "$html.png" && {
        "$PY" "$CHECK" png "$html.png" >"$T/check.out" || problem "screenshot: $(cat "$T/check.out")"
    }
    chrome dom "$html" "$html.dom" || return
    "$PY" "$CHECK" dom "$html.dom" "$html" "$json" --cwd "$dir" "$@" >"$T/check.out" ||
        problem "$(head -n 5 "$T/check.out" | tr '\n' ' ')"
    ! grep -i 'CONSOLE' "$html.dom.log" >/dev/null || problem "console: $(grep -i CONSOLE "$html.dom.log" | head -n 2)"
}

# ----------------------------------------------------------------- cases --

begin "the console check sees an error (self-test)"
D=$(casedir)
printf '<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction();</script></body></html>\n' >"$D/bad.html"
if chrome dom "$D/bad.html" "$D/bad.dom"; then
    grep -i 'CONSOLE' "$D/bad.dom.log" >/dev/null || problem "a page with an uncaught error shows no console message"
fi
end

begin "anonymize --html: Mondrian, distinct 3-diversity on Adult"
D=$(casedir)
cd "$D" || exit 2
ak anonymize --job "$ADULT/job.json" -o adult.csv --report adult.json --html adult.html
expect_rc 0
check_doc "$D/adult.html" "$D/adult.json" "$D" --original "$ADULT/adult.csv" --expect-text "passed"
grep -q 'id="risk-not-measured"\|"risk"' "$D/adult.html" || problem "the risk section says neither"
grep -c '<svg id="chart-' "$D/adult.html" | grep -qx '1[0-9]\|[2-9][0-9]' || problem "fewer than 10 charts"
for id in chart-class-sizes chart-ncp chart-risk chart-qi0-p chart-qi0-o; do
    grep -q "<svg id=\"$id\"" "$D/adult.html" || problem "chart $id missing"
done
grep -q 'role="img"' "$D/adult.html" && grep -q '<desc id=' "$D/adult.html" || problem "charts lack text alternatives"
cd "$T" || exit 2
end

begin "anonkit report of the file published earlier gives the same figures"
D2=$(casedir)
cd "$D" || exit 2
ak report adult.csv --original "$ADULT/adult.csv" --job "$ADULT/job.json" --html "$D2/again.html"
expect_rc 0
check_doc "$D2/again.html" "$D/adult.json" "$D" --original "$ADULT/adult.csv" --figures-of "$D/adult.json" \
    --expect-text "passed"
cd "$T" || exit 2
end

begin "anonkit report names the model's settings as anonymize's document does (t, its distance, beta)"
D=$(casedir)
cd "$D" || exit 2
ak anonymize --job "$ADULT/job.json" --sensitive occupation --t 0.4 --beta 5 -o tb.csv --html tb.html
expect_rc 0
ak report tb.csv --original "$ADULT/adult.csv" --job "$ADULT/job.json" --sensitive occupation --t 0.4 --beta 5 \
    --html again.html
expect_rc 0
for key in '<th>t</th>' '<th>t-distance</th>' '<th>beta</th>' '<th>beta-variant</th>'; do
    grep -q "$key" tb.html || problem "anonymize's document lacks $key"
    grep -q "$key" again.html || problem "anonkit report's document lacks $key"
done
cd "$T" || exit 2
end

begin "anonymize --html: Incognito with suppression"
D=$(casedir)
cd "$D" || exit 2
ak anonymize --job "$ADULT/job.json" --algorithm incognito --suppression 0.02 -o inc.csv --report inc.json --html inc.html
expect_rc 0
check_doc "$D/inc.html" "$D/inc.json" "$D" --original "$ADULT/adult.csv" --expect-text "Lattice summary"
grep -q '<svg id="chart-lattice"' inc.html || problem "no lattice chart"
grep -q '(chosen)' inc.html || problem "the chosen node's height is not marked"
cd "$T" || exit 2
end

begin "anonymize --html: Rothko-T out of core"
D=$(casedir)
cd "$D" || exit 2
timeout 60 "$BIN" generate --rows 20000 --seed 7 -o gen.csv 2>/dev/null
ak anonymize gen.csv -o r.csv --qi age,salary,zipcode --sensitive elevel --k 20 --algorithm rothko-t --memory 4M \
    --seed 3 --report r.json --html r.html
expect_rc 0
check_doc "$D/r.html" "$D/r.json" "$D" --original gen.csv --expect-text "against the I/O model"
grep -q 'data-json="/out_of_core/model/reads_T"' r.html || problem "the I/O model is not printed"
cd "$T" || exit 2
end

begin "anonymize --html: Rothko-S out of core"
D=$(casedir)
cd "$D" || exit 2
timeout 60 "$BIN" generate --rows 20000 --seed 7 -o gen.csv 2>/dev/null
ak anonymize gen.csv -o s.csv --qi age,salary,zipcode --sensitive elevel --k 20 --algorithm rothko-s --memory 4M \
    --seed 3 --report s.json --html s.html
expect_rc 0
check_doc "$D/s.html" "$D/s.json" "$D" --original gen.csv --expect-text "against the I/O model"
grep -q 'data-json="/out_of_core/model/reads_S"' s.html || problem "the I/O model is not printed"
cd "$T" || exit 2
end

begin "a value like <script> in the data appears escaped"
D=$(casedir)
cd "$D" || exit 2
{
    echo 'name,age,ill'
    for i in 1 2 3 4 5 6; do echo "<script>document.title='owned'</script>,3$i,a"; echo "b&c \"q\" 'x',4$i,b"; done
} >evil.csv
printf '%s\n' "<script>document.title='owned'</script>;*" "b&c \"q\" 'x';*" >evil_h.csv
ak anonymize evil.csv -o evil-out.csv --qi name,age --hierarchy name=evil_h.csv --k 3 --seed 1 --report evil.json \
    --html evil.html
expect_rc 0
check_doc "$D/evil.html" "$D/evil.json" "$D" --original evil.csv --expect-text "<script>document.title='owned'</script>"
grep -q '&lt;script&gt;document.title' evil.html || problem "the value is not escaped in the file"
grep -qi 'owned' evil.html.dom && ! grep -qi '<title>owned' evil.html.dom || problem "the script ran (title changed)"
cd "$T" || exit 2
end

begin "a failed HTML write leaves every output path as it was"
D=$(casedir)
cd "$D" || exit 2
echo old-table >t.csv
echo old-report >t.json
mkdir t.html
ak anonymize --job "$ADULT/job.json" -o t.csv --report t.json --html t.html
expect_rc 1
[ "$(cat t.csv)" = old-table ] && [ "$(cat t.json)" = old-report ] || problem "an old output was changed"
rmdir t.html
ak anonymize --job "$ADULT/job.json" -o t.csv --report t.json --html nosuchdir/t.html
expect_rc 1
[ "$(cat t.csv)" = old-table ] && [ "$(cat t.json)" = old-report ] || problem "an old output was changed"
[ -z "$(find . -name '*.tmp-*')" ] || problem "temporary left"
cd "$T" || exit 2
end

begin "anonkit report: refusals"
D=$(casedir)
cd "$D" || exit 2
ak report "$ADULT/adult.csv" --job "$ADULT/job.json" --html x.html
expect_rc 1
expect_err_has "--original"
[ ! -e x.html ] || problem "x.html written"
ak report "$ADULT/adult.csv" --original "$ADULT/adult.csv" --job "$ADULT/job.json" --html "$ADULT/adult.csv"
expect_rc 1
expect_err_has "same file"
cd "$T" || exit 2
end

begin "anonkit report documents a violation and exits 1"
D=$(casedir)
cd "$D" || exit 2
ak anonymize --job "$ADULT/job.json" -o a.csv
ak report a.csv --original "$ADULT/adult.csv" --job "$ADULT/job.json" --k 50 --html v.html
expect_rc 1
expect_err_has "violates the privacy model"
grep -q 'VIOLATED' v.html || problem "the document does not say the file violates the model"
cd "$T" || exit 2
end

finish
