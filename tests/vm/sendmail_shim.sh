#!/bin/bash
# A sendmail-compatible program for the VM alert test (issue 27), run as
#   sendmail_shim.sh PORT [-t] [-oi] [RECIPIENT...]
# (the test's `sendmail` wrapper passes the port): reads the message on stdin, takes the
# recipients from its To/Cc headers (-t) and hands it over SMTP to 127.0.0.1:PORT (what msmtp or
# an MTA's sendmail does). Bash and its /dev/tcp only: a Python client's start-up under TCG took
# longer than the monitor's 20 s delivery timeout on a loaded host.
set -u
port=$1
shift
from_headers=0
rcpts=()
for a in "$@"; do
    case $a in
        -t) from_headers=1 ;;
        -*) ;;
        *) rcpts+=("$a") ;;
    esac
done

msg=()
while IFS= read -r line || [ -n "$line" ]; do
    msg+=("${line%$'\r'}")
done

# the headers (up to the first empty line), folded lines joined
headers=()
for line in "${msg[@]}"; do
    [ -z "$line" ] && break
    if [[ $line == [[:space:]]* ]] && [ ${#headers[@]} -gt 0 ]; then
        headers[-1]+=" ${line#"${line%%[![:space:]]*}"}"
    else
        headers+=("$line")
    fi
done

addresses() { # the addresses in a header value: "Name <a@b>, c@d" -> a@b c@d
    local part
    IFS=',' read -ra parts <<<"$1"
    for part in "${parts[@]}"; do
        if [[ $part =~ \<([^\>]*)\> ]]; then
            echo "${BASH_REMATCH[1]}"
        else
            part=${part//[[:space:]]/}
            [ -n "$part" ] && echo "$part"
        fi
    done
}

sender=root
for h in "${headers[@]}"; do
    name=${h%%:*}
    value=${h#*:}
    case ${name,,} in
        to | cc)
            if [ $from_headers = 1 ]; then
                while IFS= read -r r; do rcpts+=("$r"); done < <(addresses "$value")
            fi
            ;;
        from)
            f=$(addresses "$value" | head -n 1)
            [ -n "$f" ] && sender=$f
            ;;
    esac
done
if [ ${#rcpts[@]} -eq 0 ]; then
    echo "sendmail: no recipients" >&2
    exit 1
fi

exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
expect() { # read the server's reply (continuation lines "250-"), exit unless it starts with $1
    local reply
    while IFS= read -r -t 20 reply <&3; do
        reply=${reply%$'\r'}
        [[ $reply == [0-9][0-9][0-9]-* ]] && continue
        [[ $reply == "$1"* ]] && return 0
        echo "sendmail: server said: $reply" >&2
        exit 1
    done
    echo "sendmail: no reply from the server" >&2
    exit 1
}
send() { printf '%s\r\n' "$1" >&3; }

expect 220
send "HELO localhost"
expect 250
send "MAIL FROM:<$sender>"
expect 250
for r in "${rcpts[@]}"; do
    send "RCPT TO:<$r>"
    expect 250
done
send "DATA"
expect 354
for line in "${msg[@]}"; do
    [[ $line == .* ]] && line=".$line" # dot-stuffing (RFC 5321 4.5.2)
    send "$line"
done
send "."
expect 250
send "QUIT"
expect 221
exec 3>&-
exit 0
