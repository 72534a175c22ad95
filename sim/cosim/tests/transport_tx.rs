//! The transport's transmit path (`transport_tx`: a send descriptor and address vector
//! expanded into a header word, built into a frame) in lock-step, against the wire model: for
//! random frames of every opcode, shaped as the transport model sends them (no tag, IPv4
//! identification 0 with DF, the NIC's TTL, UDP checksum 0), the descriptor and vector an
//! engine would hand over give back the wire model's bytes exactly.

use rnic_cosim::axis::Rng;
use rnic_cosim::icrc::random_frame;
use rnic_cosim::ports::PortLockStep;
use rnic_cosim::transport::{descriptor_of, run_tx_path};
use rnic_hw::transport_tx::TransportTx;
use rnic_wire::{IpRepr, MacAddr, RoceFrame};

const MAC: u64 = 0x02_00_5E_10_20_30;

/// A random frame as the transport model would send it.
fn model_frame(rng: &mut Rng, ttl: u8) -> RoceFrame {
    let mut f = random_frame(rng, 300);
    f.eth.vlan = None;
    f.eth.src = MacAddr::from_u64(MAC);
    if let IpRepr::V4(v) = &mut f.ip {
        v.ttl = ttl;
        v.ident = 0;
        v.dont_frag = true;
    }
    f.udp.dst_port = rnic_wire::udp::ROCE_PORT;
    f.udp.checksum = 0;
    f.bth.mig_req = false;
    f.bth.tver = 0;
    f.bth.fecn = false;
    f.bth.becn = false;
    f.bth.resv6 = 0;
    f.bth.resv7 = 0;
    if let Some(d) = &mut f.ext.deth {
        d.resv = 0;
    }
    f
}

#[test]
fn descriptors_and_vectors_build_the_model_frames() {
    for seed in 1..=3u64 {
        let mut rng = Rng::new(seed);
        let ttl = 1 + rng.below(255) as u8;
        let frames: Vec<RoceFrame> = (0..150).map(|_| model_frame(&mut rng, ttl)).collect();
        let descs: Vec<_> = frames
            .iter()
            .map(|f| {
                let (t, av, sgid) = descriptor_of(f);
                (t, av, sgid, f.payload.clone())
            })
            .collect();
        let mut d = PortLockStep::new(TransportTx::default(), "transport_tx", seed).unwrap();
        let r = run_tx_path(&mut d, &descs, MAC, ttl, seed, 0.2, 0.2)
            .unwrap_or_else(|m| panic!("seed {seed}: {m}"));
        assert!(r.errors.is_empty(), "seed {seed}: {:?}", r.errors);
        assert_eq!(r.frames.len(), frames.len(), "seed {seed}: frame count");
        for (k, (got, f)) in r.frames.iter().zip(&frames).enumerate() {
            let want = f.build().unwrap();
            assert_eq!(
                got.data,
                want,
                "seed {seed}: frame {k} ({:#04x}, {} payload bytes)",
                f.bth.opcode,
                f.payload.len()
            );
            assert_eq!(got.tuser, 0, "seed {seed}: frame {k} marked bad");
        }
    }
}
