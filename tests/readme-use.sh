#!/bin/sh
# readme-use.sh - the README's Use section run as a new user pastes it:
# every command line of its code blocks, as written, in order, in an empty
# directory with a small Python program named train.py and a C program
# (my_program), once as a normal user (nobody; the `sudo` lines run as root
# for that user, as sudo would) and once as root. Any line that exits
# non-zero fails the test. xpcap and xpcorr are the build tree's, on PATH.
# No GPU here: the lines that need one are skipped, each with the reason.
#   readme-use.sh README.md build/bin/xpcap build/bin/xpcorr
set -u
readme=$1 xpcap=$2 xpcorr=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
fail=0

# the lines: those of the code blocks between "## Use" and the next section
awk '/^## /{use = ($0 == "## Use")} use && /^```/{inblock = !inblock; next}
     use && inblock && NF' "$readme" > "$tmp/lines"
n=$(wc -l < "$tmp/lines")
[ "$n" -ge 30 ] || { echo "FAIL: only $n command lines found in the Use section of $readme"; exit 1; }

# xpcap and xpcorr as installed; srun as two local ranks of one host
mkdir "$tmp/bin"
ln -s "$(realpath "$xpcap")" "$tmp/bin/xpcap"
ln -s "$(realpath "$xpcorr")" "$tmp/bin/xpcorr"
cat > "$tmp/bin/srun" <<'EOF'
#!/bin/sh
# no Slurm here: the job's two ranks, one after the other, on this host
# (--ntasks-per-node=1: one task for the one node; other options ignored)
one=""
while [ $# -gt 0 ]; do
	case "$1" in
	--ntasks-per-node=1) one=1; shift;;
	-*) shift;;
	*) break;;
	esac
done
if [ -n "$one" ]; then SLURM_PROCID=0 "$@"; else SLURM_PROCID=0 "$@" && SLURM_PROCID=1 "$@"; fi
EOF
chmod 755 "$tmp/bin/srun"
path="$tmp/bin:/usr/local/bin:/usr/bin:/bin"

# why a line cannot run here, or nothing
cannot_run() {
	case "$1" in
	*"--normalize kernel="*) echo "no GPU here: needs a run with a kernel of that name";;
	sqlite3\ *) command -v sqlite3 >/dev/null || echo "sqlite3 is not installed";;
	sudo\ *) [ "$(id -u)" = 0 ] || echo "not root: sudo would ask for a password";;
	esac
}

# phase NAME UID: every line in a fresh directory owned by UID
phase() {
	name=$1 uid=$2
	dir="$tmp/$name"
	mkdir "$dir" "$dir/home"
	# a training loop that runs a moment (longer where a line attaches to it)
	cat > "$dir/train.py" <<'EOF'
import os
import time


def step(n):
    return sum(i * i for i in range(n))


t = time.monotonic()
while time.monotonic() - t < float(os.environ.get("TRAIN_SECONDS", "0.3")):
    step(20000)
EOF
	cat > "$dir/my_program.c" <<'EOF'
#include <stdio.h>

static double work(long n)
{
	double s = 0;

	for (long i = 0; i < n; i++)
		s += (double)i * 0.5;
	return s;
}

int main(int argc, char **argv)
{
	double s = 0;

	for (int i = 0; i < 100; i++)
		s += work(1000000);
	printf("%s: %d args, %s\n", argv[0], argc - 1, s > 0 ? "done" : "?");
	return 0;
}
EOF
	cc -O1 -g -fno-omit-frame-pointer -o "$dir/my_program" "$dir/my_program.c" ||
		{ echo "FAIL: cannot build my_program"; fail=1; return; }
	chown -R "$uid:$uid" "$dir"
	i=0
	while IFS= read -r line; do
		i=$((i + 1))
		why=$(cannot_run "$line")
		if [ -n "$why" ]; then
			echo "skip $name $i: $line  ($why)"
			continue
		fi
		as=""
		cmd=$line
		seconds=0.3
		# xpcap attaches to it once it runs: it must still be running then
		case "$line" in *"-p \$!"*) seconds=3;; esac
		case "$line" in
		"sudo "*)
			cmd=${line#sudo }
			# root for the user: what sudo sets
			[ "$uid" != 0 ] && as="env SUDO_UID=$uid SUDO_GID=$uid SUDO_USER=nobody";;
		*)
			[ "$uid" != 0 ] && [ "$(id -u)" = 0 ] &&
				as="setpriv --reuid=$uid --regid=$uid --clear-groups";;
		esac
		start=$(date +%s%N)
		(cd "$dir" && $as env HOME="$dir/home" PATH="$path" TRAIN_SECONDS=$seconds sh -c "$cmd") \
			</dev/null >"$dir.out" 2>"$dir.err"
		rc=$?
		took=$((($(date +%s%N) - start) / 1000000))
		if [ $rc != 0 ]; then
			echo "FAIL $name $i: exit $rc: $line"
			# a sanitizer's report starts with what went wrong; its end is a stack
			grep -m 3 -E "runtime error|ERROR: (Address|Leak)Sanitizer" "$dir.err"
			tail -5 "$dir.err"
			fail=1
		else
			echo "ok   $name $i (${took} ms): $line"
		fi
	done < "$tmp/lines"
	# what the lines left: run directories made as that user
	for run in "$dir"/run*/ "$dir"/runs/*/; do
		[ -d "$run" ] || continue
		[ "$(stat -c %u "$run")" = "$uid" ] ||
			{ echo "FAIL $name: $run not owned by uid $uid"; fail=1; }
	done
}

if [ "$(id -u)" = 0 ]; then
	# side by side: root's recordings spend seconds loading BPF
	phase user 65534 > "$tmp/user.log" 2>&1 &
	user=$!
	phase root 0 > "$tmp/root.log" 2>&1
	root_fail=$fail
	wait $user
	cat "$tmp/user.log" "$tmp/root.log"
	grep -q "^FAIL" "$tmp/user.log" "$tmp/root.log" && exit 1
	exit $root_fail
else
	if [ "${XP_REQUIRE_BPF:-}" = 1 ]; then
		echo "FAIL: the root half needs root (XP_REQUIRE_BPF=1)"
		exit 1
	fi
	echo "not root: the Use lines as this user only"
	phase user "$(id -u)"
fi
exit $fail
