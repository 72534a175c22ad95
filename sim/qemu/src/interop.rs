//! One soft-RoCE guest running a real tool against a NIC on the host (the transport model
//! today, the Verilator hardware later): the guest's RoCE NIC is on the host link, its second
//! NIC is QEMU user-mode networking, over which the tool's TCP exchange reaches the host
//! (the guest connects to 10.0.2.2, or the host connects through a forwarded port).

use crate::rxe::Scenario;

/// The guest's RoCE address and MAC, and ours on the same link.
pub const GUEST_IP: &str = "10.0.0.1";
pub const GUEST_MAC: &str = "52:54:00:00:00:01";
pub const HOST_NIC_IP: [u8; 4] = [10, 0, 0, 2];
pub const HOST_NIC_MAC: [u8; 6] = [0x52, 0x54, 0, 0, 0, 2];
/// The tools' TCP port inside the guest.
pub const TOOL_PORT: u16 = 18515;

/// Which side the guest's tool plays in the TCP exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GuestRole {
    Server,
    Client,
}

impl GuestRole {
    pub fn name(self) -> &'static str {
        match self {
            GuestRole::Server => "server",
            GuestRole::Client => "client",
        }
    }
}

/// QEMU arguments for the guest's user-mode NIC (eth1). As server, `host_port` on the host's
/// loopback is forwarded to the tool's port in the guest.
pub fn user_nic_args(role: GuestRole, host_port: u16) -> Vec<String> {
    let fwd = match role {
        GuestRole::Server => format!(",hostfwd=tcp:127.0.0.1:{host_port}-:{TOOL_PORT}"),
        GuestRole::Client => String::new(),
    };
    vec![
        "-netdev".into(),
        format!("user,id=n1,net=10.0.2.0/24,host=10.0.2.2{fwd}"),
        "-device".into(),
        "virtio-net-pci,netdev=n1,mac=52:54:00:00:01:01,romfile=".into(),
    ]
}

/// The console line a server-role guest prints once its tool listens on [`TOOL_PORT`].
pub const LISTENING: &str = "RNIC-LISTENING";

/// The guest script: eth0 (RoCE, rxe0) and eth1 (user-mode, the TCP exchange), then the tool,
/// as server or as client of the host at 10.0.2.2:`host_port` (retrying while the host is not
/// listening yet). As server it says [`LISTENING`] on the console once the kernel shows the
/// tool's socket listening (IPv4 or IPv6), so the host connects only then: QEMU's port
/// forward accepts at once whether or not anything listens in the guest.
pub fn guest_script(sc: &Scenario, role: GuestRole, host_port: u16) -> String {
    let tool = sc.tool.binary();
    let args = sc.tool.args(sc.iters, sc.size);
    let run = match role {
        GuestRole::Server => format!(
            "{{ {tool} {args} & t=$!; \
until grep -qs ':{TOOL_PORT:04X} [0-9A-F]*:0000 0A' /proc/net/tcp /proc/net/tcp6; do \
kill -0 $t 2>/dev/null || break; sleep 0.1; done; echo {LISTENING} >&3; wait $t; }}"
        ),
        GuestRole::Client => format!("{tool} {args} -p {host_port} 10.0.2.2"),
    };
    crate::rxe::script(
        GUEST_IP,
        "ip link set eth1 up\nip addr add 10.0.2.15/24 dev eth1\n",
        &run,
    )
}
