#!/bin/sh
# Stops the units before their binary goes away.
set -e
if [ -d /run/systemd/system ]; then
	systemctl stop heureka-server.service 'heureka-agent@*.service' >/dev/null 2>&1 || true
	systemctl disable heureka-server.service >/dev/null 2>&1 || true
fi
