#!/bin/sh
# Removes the system user on remove and purge (Debian passes "remove" or
# "purge"; an upgrade passes "upgrade" and keeps it).
set -e
case "$1" in
remove | purge | 0)
	if getent passwd heureka >/dev/null; then
		userdel heureka >/dev/null 2>&1 || true
	fi
	if getent group heureka >/dev/null; then
		groupdel heureka >/dev/null 2>&1 || true
	fi
	;;
esac
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
