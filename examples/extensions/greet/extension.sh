#!/bin/sh
# /greet [name]: adds a greeting to the session as a custom message.
#
# Plain POSIX sh, no JSON tools: the host writes the fields of a "command" message in a
# fixed order ({"type":"command","id":N,"name":"...","args":"..."}), so the id and the
# (already JSON-escaped) arguments can be cut out with parameter expansion, and the
# arguments can be pasted back into a JSON string as they are. Real extensions should
# use a JSON parser.

IFS= read -r hello || exit 0

printf '%s\n' '{"type":"register","name":"greet","commands":[{"name":"greet","description":"Add a greeting to the session"}]}'

while IFS= read -r line; do
    case "$line" in
    '{"type":"command",'*)
        id=${line#*\"id\":}
        id=${id%%,*}
        args=${line#*\"args\":\"}
        args=${args%\"\}}
        [ -n "$args" ] || args=world
        printf '{"type":"send_message","message":{"customType":"greet","content":"Hello, %s!","display":true,"details":{"greeted":"%s"}}}\n' "$args" "$args"
        printf '{"type":"response","id":%s}\n' "$id"
        ;;
    '{"type":"event","id":'*)
        # Not subscribed to any event, but answer anything with an id anyway.
        id=${line#*\"id\":}
        id=${id%%,*}
        printf '{"type":"response","id":%s}\n' "$id"
        ;;
    esac
done
