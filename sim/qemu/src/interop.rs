//! One soft-RoCE guest running a real tool against a NIC on the host (the transport model
//! today, the Verilator hardware later): the guest's RoCE NIC is on the host link, its second
//! NIC is QEMU user-mode networking, over which the tool's TCP exchange reaches the host
//! (the guest connects to 10.0.2.2, or the host connects through a forwarded port).

use crate::rxe::{Scenario, Tool};

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

/// The guest script: eth0 (RoCE, rxe0) and eth1 (user-mode, the TCP exchange), then the tool,
/// as server or as client of the host at 10.0.2.2:`host_port` (retrying while the host is not
/// listening yet).
pub fn guest_script(sc: &Scenario, role: GuestRole, host_port: u16) -> String {
    let tool = sc.tool.binary();
    let args = sc.tool.args(sc.iters, sc.size);
    let run = match role {
        GuestRole::Server => format!("{tool} {args}"),
        GuestRole::Client => format!("{tool} {args} -p {host_port} 10.0.2.2"),
    };
    format!(
        r#"set -u
ip link set lo up
ip link set eth0 up
ip addr add {GUEST_IP}/24 dev eth0
ip link set eth1 up
ip addr add 10.0.2.15/24 dev eth1
rdma link add rxe0 type rxe netdev eth0 || exit 10
i=0
until grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null; do
  i=$((i+1)); [ $i -gt 100 ] && {{ echo "RNIC: rxe0 port never ACTIVE"; exit 11; }}
  sleep 0.1
done
echo "RNIC-PORT-ACTIVE"
n=0
while :; do
  {run} > /tmp/out 2>&1
  rc=$?
  cat /tmp/out
  if [ $rc -ne 0 ] && grep -qi "connect" /tmp/out && [ $n -lt 60 ]; then
    n=$((n+1)); sleep 0.5; continue
  fi
  break
done
echo "RNIC-TOOL-STATUS $rc"
exit $rc
"#
    )
}

/// Scenarios the host side can play: all of them.
pub fn supported(tool: Tool) -> bool {
    Tool::ALL.contains(&tool)
}
