# bash completion for heureka. Load it with: source <(heureka completion bash)
_heureka() {
	local cur prev cmd flags
	cur="${COMP_WORDS[COMP_CWORD]}"
	prev="${COMP_WORDS[COMP_CWORD-1]}"
	cmd="${COMP_WORDS[1]}"
	if [[ $COMP_CWORD -eq 1 ]]; then
		COMPREPLY=( $(compgen -W "agent alert apps auth completion demo deregister events gateway hadoop instances man pick server show sim status topology version watch help" -- "$cur") )
		return
	fi
	case "$prev" in
		-o|--o|-output|--output) COMPREPLY=( $(compgen -W "table json" -- "$cur") ); return ;;
		-app|--app) COMPREPLY=( $(compgen -W "$(heureka completion --list apps 2>/dev/null)" -- "$cur") ); return ;;
		-value|--value|-status|--status) COMPREPLY=( $(compgen -W "DOWN OUT_OF_SERVICE STARTING UNKNOWN UP" -- "$cur") ); return ;;
		-registry|--registry|-alertmanager|--alertmanager|-webhook|--webhook|-timeout|--timeout|-since|--since) return ;;
	esac
	if [[ $cur == -* ]]; then
		case "$cmd" in
		agent) flags="--admin-state --ca-file --cert-file --cluster --data-dir --data-port --drain --failure-threshold --flap-hold-max --flap-window --hang-after --host --hung-mark-after --ip --jmx --key-file --lease-duration --log-format --log-level --metadata-interval --pid --pid-file --probe-interval --probe-timeout --rack --registry --renew-interval --role --rpc-port --systemd-unit --topology-script --topology-table --up-after" ;;
		alert) flags="--alertmanager --app --ca-file --cert-file --for --key-file --log-format --log-level --registry --resend --state --status-interval --timeout --webhook" ;;
		apps) flags="--ca-file --cert-file --key-file -o --output --registry --timeout" ;;
		demo) flags="--base-port --cluster --datanodes --log-level" ;;
		deregister) flags="--ca-file --cert-file --key-file --registry --timeout" ;;
		events) flags="--app --ca-file --cert-file --key-file -o --output --registry --since --timeout" ;;
		gateway) flags="--auth-file --ca-file --cert-file --cluster --failover-wait --fullness --key-file --listen --log-format --log-level --namenode-scheme --probe-timeout --registry --request-timeout --timeout --tls-cert --tls-client-ca --tls-key" ;;
		instances) flags="--ca-file --cert-file --host --key-file -o --output --registry --status --timeout" ;;
		man) flags="--dir --gzip" ;;
		pick) flags="--ca-file --cert-file --cluster --exclude --fullness --key-file -n -o --output --probe --probe-timeout --rack --registry --timeout --writer" ;;
		server) flags="--auth-file --auth-poll --debug-listen --delta-retention --listen --log-format --log-level --max-watchers-per-client --peer-auth-file --peer-ca --peer-cert --peer-key --peers --read-timeout --self-preservation --self-url --shutdown-timeout --sync-timeout --tls-cert --tls-client-ca --tls-key --write-burst --write-rate" ;;
		show) flags="--ca-file --cert-file --key-file -o --output --registry --timeout" ;;
		sim) flags="--blocks --capacity --cluster-id --control --ha-state --hostname --listen --log-format --log-level --pid-file --port --stopped --used --version --volume --webhdfs-datanode --webhdfs-dir" ;;
		status) flags="--ca-file --cert-file --key-file --registry --timeout --value" ;;
		topology) flags="--cache --cluster --log-level --registry --timeout" ;;
		watch) flags="--app --ca-file --cert-file --key-file -o --output --registry --timeout" ;;
		esac
		COMPREPLY=( $(compgen -W "$flags" -- "$cur") )
		return
	fi
	case "$cmd" in
		instances)
			COMPREPLY=( $(compgen -W "$(heureka completion --list apps 2>/dev/null)" -- "$cur") ) ;;
		show|deregister)
			COMPREPLY=( $(compgen -W "$(heureka completion --list ids 2>/dev/null)" -- "$cur") ) ;;
		status)
			case $COMP_CWORD in
				2) COMPREPLY=( $(compgen -W "set clear" -- "$cur") ) ;;
				3) COMPREPLY=( $(compgen -W "$(heureka completion --list ids 2>/dev/null)" -- "$cur") ) ;;
				4) [[ ${COMP_WORDS[2]} == set ]] && COMPREPLY=( $(compgen -W "DOWN OUT_OF_SERVICE STARTING UNKNOWN UP" -- "$cur") ) ;;
			esac ;;
		completion)
			COMPREPLY=( $(compgen -W "bash zsh" -- "$cur") ) ;;
		help)
			COMPREPLY=( $(compgen -W "agent alert apps auth completion demo deregister events gateway hadoop instances man pick server show sim status topology version watch help" -- "$cur") ) ;;
	esac
}
complete -F _heureka heureka
