//! What the engines' benches share: a top's ports set and read by name, the clock and its
//! count, and the random stalls of every ready and offer (chance `stall` per clock, 0: none).
//! Used by [`crate::requester_sim`], [`crate::completer_sim`] and
//! [`crate::requester_path_sim`].

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::PortDut;

pub struct BenchPorts<D: PortDut> {
    pub dut: D,
    rng: Rng,
    stall: f64,
    /// Clocks since reset.
    pub cycle: u64,
}

impl<D: PortDut> BenchPorts<D> {
    /// `dut` after four clocks of reset; stalls drawn from `seed`.
    pub fn new(mut dut: D, seed: u64, stall: f64) -> Result<Self, String> {
        let r = dut.input("reset");
        dut.set(r, 1);
        for _ in 0..4 {
            dut.settle().map_err(|e| e.to_string())?;
            dut.tick();
        }
        dut.set(r, 0);
        Ok(BenchPorts {
            dut,
            rng: Rng::new(seed),
            stall,
            cycle: 0,
        })
    }

    pub fn set(&mut self, name: &str, v: u64) {
        let i = self.dut.input(name);
        self.dut.set(i, v);
    }

    pub fn set_words(&mut self, name: &str, w: &[u64]) {
        let i = self.dut.input(name);
        self.dut.set_words(i, w);
    }

    pub fn get(&self, name: &str) -> u64 {
        self.dut.get(self.dut.output(name))
    }

    pub fn get_words(&self, name: &str) -> Vec<u64> {
        self.dut.get_words(self.dut.output(name))
    }

    /// The combinational outputs for the inputs set.
    pub fn settle(&mut self) -> Result<(), String> {
        self.dut.settle().map_err(|e| e.to_string())
    }

    /// One clock edge.
    pub fn tick(&mut self) {
        self.dut.tick();
        self.cycle += 1;
    }

    /// A ready or an offer this clock: false with chance `stall`.
    pub fn go(&mut self) -> bool {
        self.stall == 0.0 || !self.rng.chance(self.stall)
    }

    /// A number below `n` from the stall generator.
    pub fn below(&mut self, n: u64) -> u64 {
        self.rng.below(n)
    }

    /// Whether the bench stalls at all.
    pub fn stalls(&self) -> bool {
        self.stall != 0.0
    }
}
