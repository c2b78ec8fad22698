# fish completion for rtdb: subcommands, flags, and child keys read from the database.
# Copy to ~/.config/fish/completions/rtdb.fish.

function __rtdb_paths
    set -l cur (commandline -ct)
    set -l dir ''
    if string match -q '*/*' -- $cur
        set dir (string replace -r '[^/]*$' '' -- $cur)
    end
    set -l parent $dir
    test -z "$parent"; and set parent /
    set -l data (commandline -opc | string match -r -- '--data=?(.*)' | tail -n 1)
    rtdb ls $parent --json 2>/dev/null | string trim -c '[]' | string split '","' | string trim -c '"' | while read -l key
        test -n "$key"; and echo $dir$key/
    end
end

set -l commands get set update push remove rm priority ls query watch watches unwatch cd pwd help history exit quit
complete -c rtdb -f
complete -c rtdb -l data -r -a '(__fish_complete_directories)' -d 'embedded database data folder'
complete -c rtdb -s c -r -d 'run COMMAND and exit'
complete -c rtdb -l url -r -d 'a server database URL (ws://127.0.0.1:9000?ns=demo)'
complete -c rtdb -l emulator -r -d 'a local server or the emulator (HOST:PORT)'
complete -c rtdb -l ns -r -d 'the namespace with --emulator'
complete -c rtdb -l cacert -r -F -d 'trust the certificates in this PEM file (wss://, https://)'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a serve -d 'run the local server'
complete -c rtdb -l keep-going -d 'run the remaining lines after an error'
complete -c rtdb -l no-color -d 'no colour'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a get -d 'print the value at a path'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a set -d 'overwrite the value at a path'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a update -d 'atomic multi-path update'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a push -d 'append under a new chronological key'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'remove rm' -d 'delete the value at a path'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a priority -d 'set the priority of a value'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a ls -d 'list child keys'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a query -d 'ordered, filtered children of a path'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a watch -d 'stream live events'
complete -c rtdb -n "__fish_seen_subcommand_from get set update push remove rm priority ls query watch" -a '(__rtdb_paths)'
for flag in orderByChild limitToFirst limitToLast startAt startAfter endAt endBefore equalTo events
    complete -c rtdb -n "__fish_seen_subcommand_from query watch" -l $flag -r
end
for flag in orderByKey orderByValue orderByPriority bg
    complete -c rtdb -n "__fish_seen_subcommand_from query watch" -l $flag
end
complete -c rtdb -n "__fish_seen_subcommand_from query" -l watch -d 'keep watching'
complete -c rtdb -n "__fish_seen_subcommand_from $commands" -l json -d 'compact JSON output'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l shallow -d 'children as true'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l export -d 'include priorities'
complete -c rtdb -n "__fish_seen_subcommand_from set" -l priority -r -d 'also set the priority'
complete -c rtdb -n "__fish_seen_subcommand_from remove rm" -s f -l force -d 'do not ask'
complete -c rtdb -n "__fish_seen_subcommand_from ls" -s l -l long -d 'show child counts and values'
