# bash completion for rtdb: commands, flags, and child keys read from the database.
# Made by 'rtdb completions bash'. Source it from ~/.bashrc, or copy it to
# /usr/share/bash-completion/completions/rtdb.

_rtdb_keys() {
    # Child keys of $1 in the database the other arguments choose (--data DIR, --url URL, …),
    # with a short deadline so a slow server does not hold the prompt.
    local parent=$1
    shift
    rtdb "$@" --no-persistence --timeout 2s ls "$parent" --json 2>/dev/null |
        sed -e 's/^\[//' -e 's/\]$//' -e 's/","/"\n"/g' | sed -e 's/^"//' -e 's/"$//'
}

_rtdb() {
    # The words as typed, split at spaces only: bash's COMP_WORDS also splits at : and =,
    # which cuts a URL (ws://host:9000?ns=x) or HOST:PORT into pieces.
    local -a words
    if [[ -n ${COMP_LINE-} ]]; then
        read -ra words <<< "${COMP_LINE:0:COMP_POINT}"
        [[ ${COMP_LINE:0:COMP_POINT} == *[[:space:]] ]] && words+=("")
    else
        words=("${COMP_WORDS[@]}")
    fi
    local cword=$((${#words[@]} - 1))
    local cur=${words[cword]} prev=${words[cword-1]}
    local commands="get set update push remove rm cp mv rename priority ls edit tree du import export query watch monitor profile watches unwatch tx ondisconnect online offline keepsynced status pending purge-writes cache auth logout rules snapshot namespaces use sleep repeat timing pager cd pwd help history exit quit serve completions"
    local options="--data --url --emulator --ns --timeout --cacert --credentials --no-persistence --cache-size -c --keep-going --json --format --no-color --no-pager --timing --recover --version --help -h"

    local i cmd="" cmdi=0 nokeys=""
    local -a db=()
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --data|--url|--emulator|--ns|--cacert|--credentials)
                # A --data folder that does not exist has no keys (and must not be made).
                [[ ${words[i]} == --data && ! -d ${words[i+1]} ]] && nokeys=1
                db+=("${words[i]}" "${words[i+1]}"); ((i++)) ;;
            --timeout|--cache-size|-c|--format) ((i++)) ;;
            -*) ;;
            *) cmd=${words[i]}; cmdi=$i; break ;;
        esac
    done

    case $prev in
        --data) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        --cacert|--credentials|--rules|--tls-cert|--tls-key) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --events) COMPREPLY=($(compgen -W "value child_added child_changed child_removed child_moved" -- "$cur")); return ;;
        --format) COMPREPLY=($(compgen -W "json ndjson table csv tsv" -- "$cur")); return ;;
    esac
    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "$commands $options" -- "$cur"))
        return
    fi
    if [[ $cmd == completions ]]; then
        COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        local flags="--json --format --no-color"
        case $cmd in
            serve) flags="--host --port --data --tls-cert --tls-key --allow-origin --allow-host --request-timeout --rules --log-rules --no-viewer --import --export-on-exit --recover --help -h" ;;
            get) flags+=" --shallow --export --orderByChild --orderByKey --orderByValue --orderByPriority --limitToFirst --limitToLast --startAt --startAfter --endAt --endBefore --equalTo --explain" ;;
            set) flags+=" --priority" ;;
            remove|rm) flags+=" --force -f" ;;
            cp) flags+=" --merge --force -f" ;;
            mv|rename) flags+=" --merge --force -f" ;;
            ls) flags+=" --long -l" ;;
            tree) flags+=" --depth" ;;
            du) flags+=" --depth" ;;
            import) flags+=" --merge --chunk-size --quiet -q" ;;
            export) flags+=" --priorities --quiet -q" ;;
            query) flags+=" --orderByChild --orderByKey --orderByValue --orderByPriority --limitToFirst --limitToLast --startAt --startAfter --endAt --endBefore --equalTo --watch --events --bg --explain" ;;
            watch) flags+=" --orderByChild --orderByKey --orderByValue --orderByPriority --limitToFirst --limitToLast --startAt --startAfter --endAt --endBefore --equalTo --events --bg" ;;
            monitor) flags+=" --bg" ;;
            profile) flags+=" --duration --raw --output -o --input --no-collapse" ;;
            tx) flags+=" --increment --append --set-if-absent --verbose -v" ;;
            purge-writes) flags+=" --force -f" ;;
            auth) flags+=" --uid --claims" ;;
            rules) flags+=" --as --claims --rules" ;;
            repeat) flags+=" --every" ;;
        esac
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
        return
    fi
    if [[ $cmd == help ]]; then
        COMPREPLY=($(compgen -W "get set update push remove rm cp mv rename priority ls edit tree du import export query watch monitor profile watches unwatch tx ondisconnect online offline keepsynced status pending purge-writes cache auth logout rules snapshot namespaces use sleep repeat timing pager cd pwd help history exit quit" -- "$cur"))
        return
    fi
    # The words some commands take first (rules check read, snapshot save).
    case $cmd in
            rules)
                case "${words[*]:cmdi+1:cword-cmdi-1}" in
                    '') COMPREPLY=($(compgen -W "get set check coverage" -- "$cur")); return ;;
                    'check') COMPREPLY=($(compgen -W "read write update" -- "$cur")); return ;;
                esac ;;
            snapshot)
                case "${words[*]:cmdi+1:cword-cmdi-1}" in
                    '') COMPREPLY=($(compgen -W "save restore list rm" -- "$cur")); return ;;
                esac ;;
        esac
    # The first argument of the data commands is a path: complete it key by key.
    case $cmd in get|set|update|push|remove|rm|cp|mv|rename|priority|ls|edit|tree|du|import|export|query|watch|monitor|tx|ondisconnect|keepsynced|cd) ;; *) return ;; esac
    local last=1
    case $cmd in cp|mv|rename) last=2 ;; esac
    ((cword > cmdi && cword <= cmdi + last)) && [[ -z $nokeys ]] || return
    local dir="" partial=$cur
    if [[ $cur == */* ]]; then
        dir=${cur%/*}/
        partial=${cur##*/}
    fi
    local parent=${dir:-/}
    local key
    COMPREPLY=()
    while IFS= read -r key; do
        [[ -n $key && $key == "$partial"* ]] && COMPREPLY+=("$dir$key")
    done < <(_rtdb_keys "$parent" "${db[@]}")
    compopt -o nospace 2>/dev/null
    if ((${#COMPREPLY[@]} == 1)); then
        COMPREPLY[0]+="/"
    fi
    # Bash replaces only what follows the last : or = of the word it split there.
    local cut=${cur%"${cur##*[:=]}"}
    [[ -n $cut && $COMP_WORDBREAKS == *[:=]* ]] && COMPREPLY=("${COMPREPLY[@]#"$cut"}")
}

complete -F _rtdb rtdb
