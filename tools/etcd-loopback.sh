# Sourced by demo-etcd.sh, which starts a throwaway etcd.
# Picks two free loopback ports (asked of the kernel, so no guessed port collides
# with a neighbour) and sets CLIENT_PORT, PEER_PORT and URL (the client URL).
etcd_loopback_ports() {
    local ports
    ports=$(python3 -c 'import socket
for _ in range(2):
    s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    CLIENT_PORT=$(echo "$ports" | head -1)
    PEER_PORT=$(echo "$ports" | tail -1)
    URL=http://127.0.0.1:$CLIENT_PORT
}
