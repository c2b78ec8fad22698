# fish completion for rtdb: commands, flags, and child keys read from the database.
# Made by 'rtdb completions fish'. Copy to ~/.config/fish/completions/rtdb.fish.

# True when the words typed after command $argv[1] are exactly $argv[2..].
function __rtdb_words_after
    set -l words (commandline -opc)
    set -l at (contains -i -- $argv[1] $words); or return 1
    set -l after
    test (count $words) -gt $at; and set after $words[(math $at + 1)..-1]
    set -l typed (string join ' ' -- $after)
    set -l wanted (string join ' ' -- $argv[2..-1])
    test "$typed" = "$wanted"
end

function __rtdb_paths
    set -l cur (commandline -ct)
    set -l dir ''
    if string match -q '*/*' -- $cur
        set dir (string replace -r '[^/]*$' '' -- $cur)
    end
    set -l parent $dir
    test -z "$parent"; and set parent /
    set -l words (commandline -opc)
    set -l db
    for i in (seq (count $words))
        if contains -- $words[$i] --data --url --emulator --ns --cacert --credentials
            set -l next (math $i + 1)
            test $next -le (count $words); and set db $db $words[$i] $words[$next]
        end
    end
    rtdb $db --no-persistence --timeout 2s ls $parent --json 2>/dev/null | string trim -c '[]' | string split '","' | string trim -c '"' | while read -l key
        test -n "$key"; and echo $dir$key/
    end
end

set -l commands get set update push remove rm priority ls edit tree du import export query watch monitor watches unwatch tx ondisconnect online offline keepsynced status pending purge-writes cache auth logout rules snapshot namespaces use sleep timing pager cd pwd help history exit quit serve completions
complete -c rtdb -f
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l data -r -a '(__fish_complete_directories)' -d 'the embedded database data folder'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l url -x -d 'a server database URL (ws://127.0.0.1:9000?ns=demo)'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l emulator -x -d 'a local server or the emulator'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l ns -x -d 'the namespace with --emulator'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l timeout -x -d 'how long a command waits for the server'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l cacert -r -F -d 'trust the certificates in this PEM file (wss://, https://)'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l credentials -r -F -d 'sign in with this service account key (OAuth2 tokens made here)'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l no-persistence -d 'keep no disk cache of a server'\''s database'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l cache-size -x -d 'the disk cache'\''s limit, 1 to 100 MB'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -s c -x -d 'run COMMAND and exit'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l keep-going -d 'run the remaining lines after an error'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l json -d 'every command'\''s output as compact JSON'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l no-color -d 'no colour'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l no-pager -d 'print long output straight, not through $PAGER'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l timing -d 'print how long each command took'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l recover -d 'salvage a damaged embedded database and exit'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l version -d 'print the version and exit'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -l help -s h -d 'show help'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'get' -d 'print the value at a path'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'set' -d 'overwrite the value at a path'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'update' -d 'atomic multi-path update'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'push' -d 'append under a new chronological key'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'remove rm' -d 'delete the value at a path'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'priority' -d 'set the priority of a value'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'ls' -d 'list child keys'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'edit' -d 'change a value in your editor'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'tree' -d 'the shape of a subtree'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'du' -d 'the size of each subtree, largest first'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'import' -d 'load a JSON file of any size'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'export' -d 'write a subtree as JSON, to a file or the output'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'query' -d 'ordered, filtered children of a path'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'watch' -d 'stream live events'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'monitor' -d 'show every operation of every client as it runs'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'watches' -d 'list background watches and monitors'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'unwatch' -d 'stop background watches and monitors'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'tx' -d 'atomic read-modify-write of a value'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'ondisconnect' -d 'writes the server makes when this shell leaves'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'online' -d 'connect again after '\''offline'\'''
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'offline' -d 'disconnect until '\''online'\'''
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'keepsynced' -d 'keep a path'\''s data cached and fresh'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'status' -d 'connection, pending writes, watches'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'pending' -d 'list the writes not yet acknowledged'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'purge-writes' -d 'drop the queued writes'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'cache' -d 'the disk cache of a server'\''s database'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'auth' -d 'sign in: the server'\''s rules see who you are'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'logout' -d 'forget the credential'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'rules' -d 'read, replace and try out the security rules'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'snapshot' -d 'save the whole database under a name, and put it back'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'namespaces' -d 'list the server'\''s namespaces'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'use' -d 'move to another namespace of the server'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'sleep' -d 'wait, as scripts do for other writers'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'timing' -d 'print how long each command takes'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'pager' -d 'page output taller than the terminal'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'cd' -d 'change the current path'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'pwd' -d 'print the current path'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'help' -d 'list commands, or explain one'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'history' -d 'show the commands typed so far'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a 'exit quit' -d 'leave the shell (also Ctrl-D)'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a serve -d 'run the local server'
complete -c rtdb -n "not __fish_seen_subcommand_from $commands" -a completions -d 'print a completion script: bash, zsh or fish'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l host -x -d 'the address to listen on'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l port -x -d 'the port'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l data -r -a '(__fish_complete_directories)' -d 'the folder of one database per namespace'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l tls-cert -r -F -d 'serve TLS with this PEM certificate chain'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l tls-key -r -F -d 'the PEM private key of --tls-cert'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l allow-origin -x -d 'also serve web pages from this origin'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l allow-host -x -d 'also answer requests for this host name'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l request-timeout -x -d 'seconds a request may take to arrive'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l rules -r -F -d 'security rules for every namespace (JSON, comments allowed)'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l log-rules -d 'log every decision of the security rules'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l import -r -a '(__fish_complete_directories)' -d 'load a firebase emulators:export folder at start'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l export-on-exit -r -a '(__fish_complete_directories)' -d 'write an emulator export folder when stopped'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l recover -d 'salvage damaged databases and exit'
complete -c rtdb -n "__fish_seen_subcommand_from serve" -l help -s h -d 'show help'
complete -c rtdb -n "__fish_seen_subcommand_from completions" -a 'bash zsh fish'
complete -c rtdb -n "__fish_seen_subcommand_from get set update push remove rm priority ls edit tree du import export query watch monitor tx ondisconnect keepsynced cd" -a '(__rtdb_paths)'
complete -c rtdb -n "__fish_seen_subcommand_from get set update push remove rm priority ls edit tree du import export query watch monitor watches unwatch tx ondisconnect online offline keepsynced status pending purge-writes cache auth logout rules snapshot namespaces use sleep timing pager cd pwd help history exit quit" -l json -d 'compact JSON output'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l shallow -d 'children as true instead of their values'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l export -d 'include priorities (.priority, .value)'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l orderByChild -x -d 'order by the value of this child (a path like a/b)'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l orderByKey -d 'order by key'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l orderByValue -d 'order by value'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l orderByPriority -d 'order by priority (the default order)'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l limitToFirst -x -d 'only the first N children'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l limitToLast -x -d 'only the last N children'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l startAt -x -d 'children from V on (KEY breaks ties)'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l startAfter -x -d 'children after V'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l endAt -x -d 'children up to V'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l endBefore -x -d 'children before V'
complete -c rtdb -n "__fish_seen_subcommand_from get" -l equalTo -x -d 'children equal to V'
complete -c rtdb -n "__fish_seen_subcommand_from set" -l priority -x -d 'also set the priority (a number or a string)'
complete -c rtdb -n "__fish_seen_subcommand_from remove rm" -l force -s f -d 'do not ask'
complete -c rtdb -n "__fish_seen_subcommand_from ls" -l long -s l -d 'show child counts and values'
complete -c rtdb -n "__fish_seen_subcommand_from tree" -l depth -x -d 'levels to show (1 to 32; default 2)'
complete -c rtdb -n "__fish_seen_subcommand_from du" -l depth -x -d 'levels to break down (1 to 32; default 1)'
complete -c rtdb -n "__fish_seen_subcommand_from import" -l merge -d 'replace only the children the file names, as update does'
complete -c rtdb -n "__fish_seen_subcommand_from import" -l chunk-size -x -d 'the size of one write, 64k to 15M (default: 8M whole, else 2M parts)'
complete -c rtdb -n "__fish_seen_subcommand_from import" -l quiet -s q -d 'no progress and no summary'
complete -c rtdb -n "__fish_seen_subcommand_from export" -l priorities -d 'include priorities (.priority, .value), as get --export'
complete -c rtdb -n "__fish_seen_subcommand_from export" -l quiet -s q -d 'no progress and no summary'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l orderByChild -x -d 'order by the value of this child (a path like a/b)'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l orderByKey -d 'order by key'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l orderByValue -d 'order by value'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l orderByPriority -d 'order by priority (the default order)'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l limitToFirst -x -d 'only the first N children'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l limitToLast -x -d 'only the last N children'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l startAt -x -d 'children from V on (KEY breaks ties)'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l startAfter -x -d 'children after V'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l endAt -x -d 'children up to V'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l endBefore -x -d 'children before V'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l equalTo -x -d 'children equal to V'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l watch -d 'keep watching the query'\''s events'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l events -x -a 'value child_added child_changed child_removed child_moved' -d 'which events: value, child_added, child_changed, child_removed, child_moved (comma-separated; default all)'
complete -c rtdb -n "__fish_seen_subcommand_from query" -l bg -d 'with --watch: in the background'
complete -c rtdb -n "__fish_seen_subcommand_from watch" -l orderByChild -x -d 'order by the value of this child (a path like a/b)'
complete -c rtdb -n "__fish_seen_subcommand_from watch" -l orderByKey -d 'order by key'
complete -c rtdb -n "__fish_seen_subcommand_from watch" -l orderByValue -d 'order by value'
complete -c rtdb -n "__fish_seen_subcommand_from watch" -l orderByPriority -d 'order by priority (the default order)'
complete -c rtdb -n "__fish_seen_subcommand_from watch" -l limitToFirst -x -d 'only the first N children'
complete -c rtdb -n "__fish_seen_subcommand_from watch" -l limitToLast -x -d 'only the last N children'
complete -c rtdb -n "__fish_seen_subcommand_from watch" -l startAt -x -d 'children from V on (KEY breaks ties)'
complete -c rtdb -n "__fish_seen_subcommand_from watch" -l startAfter -x -d 'children after V'
complete -c rtdb -n "__fish_seen_subcommand_from watch" -l endAt -x -d 'children up to V'
complete -c rtdb -n "__fish_seen_subcommand_from watch" -l endBefore -x -d 'children before V'
complete -c rtdb -n "__fish_seen_subcommand_from watch" -l equalTo -x -d 'children equal to V'
complete -c rtdb -n "__fish_seen_subcommand_from watch" -l events -x -a 'value child_added child_changed child_removed child_moved' -d 'which events: value, child_added, child_changed, child_removed, child_moved (comma-separated; default all)'
complete -c rtdb -n "__fish_seen_subcommand_from watch" -l bg -d 'run in the background'
complete -c rtdb -n "__fish_seen_subcommand_from monitor" -l bg -d 'run in the background'
complete -c rtdb -n "__fish_seen_subcommand_from tx" -l increment -x -d 'add N to a number (nothing there counts as 0)'
complete -c rtdb -n "__fish_seen_subcommand_from tx" -l append -x -d 'add VALUE at the end of a list'
complete -c rtdb -n "__fish_seen_subcommand_from tx" -l set-if-absent -x -d 'write VALUE only if there is nothing there'
complete -c rtdb -n "__fish_seen_subcommand_from tx" -l verbose -s v -d 'print each attempt: the value it saw and what it computed'
complete -c rtdb -n "__fish_seen_subcommand_from purge-writes" -l force -s f -d 'do not ask first'
complete -c rtdb -n "__fish_seen_subcommand_from auth" -l uid -x -d 'make an unsigned token for this user (local servers)'
complete -c rtdb -n "__fish_seen_subcommand_from auth" -l claims -x -d 'with --uid: extra claims, a JSON object'
complete -c rtdb -n "__fish_seen_subcommand_from rules" -l as -x -d 'rules check: as this user (auth.uid); no one without it'
complete -c rtdb -n "__fish_seen_subcommand_from rules" -l claims -x -d 'rules check: with these claims in auth.token, a JSON object'
complete -c rtdb -n "__fish_seen_subcommand_from rules" -l rules -x -d 'rules check: these rules instead of the database'\''s'
complete -c rtdb -n "__fish_seen_subcommand_from help" -a 'get set update push remove rm priority ls edit tree du import export query watch monitor watches unwatch tx ondisconnect online offline keepsynced status pending purge-writes cache auth logout rules snapshot namespaces use sleep timing pager cd pwd help history exit quit'
complete -c rtdb -n "__rtdb_words_after rules " -a 'get set check coverage'
complete -c rtdb -n "__rtdb_words_after rules check" -a 'read write update'
complete -c rtdb -n "__rtdb_words_after snapshot " -a 'save restore list rm'
