//! The queue manager of one block of QP rings (send, receive or completion queues): the
//! ring registers of `2^Q` queues in block RAM (one RAM per register word: base low and high,
//! size, producer, consumer), written and read by the host through the CSR port, looked up
//! and committed by the engines.
//!
//! - Host: a write of queue `q`'s word `w` lands at the clock edge; DOORBELL (word 5) writes
//!   the index the host owns (work rings: the producer; completion rings: the consumer) and
//!   announces the queue on `db_*` for one cycle, for the engines' schedulers. A read started
//!   with `rd_start` answers on `rd_data` the next cycle (the RAM's registered output); host
//!   reads go first.
//! - Engines: `look_*` reads all of a queue's words (answered the next cycle on `got_*`,
//!   while `look_ready` was high); `commit_*` writes the index the NIC owns (work rings: the
//!   consumer, "dequeued"; completion rings: the producer, "entry written"), held off for the
//!   cycle the host writes the same word.
//!
//! A lookup or host read sees the writes of earlier cycles (the RAM reads before it writes).
//!
//! Block RAM keeps its contents through resets (it powers up zero): the driver sets every
//! ring it uses before enabling it, as it does with the raw rings.

use rust_hdl::prelude::*;

/// Register words of a queue, in the map's order.
pub const W_BASE_LO: u64 = 0;
pub const W_BASE_HI: u64 = 1;
pub const W_SIZE: u64 = 2;
pub const W_PROD: u64 = 3;
pub const W_CONS: u64 = 4;
pub const W_DOORBELL: u64 = 5;

#[derive(LogicBlock)]
pub struct QueueMgr<const Q: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub wr_en: Signal<In, Bit>,
    pub wr_queue: Signal<In, Bits<Q>>,
    pub wr_word: Signal<In, Bits<3>>,
    pub wr_data: Signal<In, Bits<32>>,
    pub rd_start: Signal<In, Bit>,
    pub rd_queue: Signal<In, Bits<Q>>,
    pub rd_word: Signal<In, Bits<3>>,
    pub rd_data: Signal<Out, Bits<32>>,
    pub look_valid: Signal<In, Bit>,
    pub look_ready: Signal<Out, Bit>,
    pub look_queue: Signal<In, Bits<Q>>,
    pub got_valid: Signal<Out, Bit>,
    pub got_queue: Signal<Out, Bits<Q>>,
    pub got_base: Signal<Out, Bits<64>>,
    pub got_size: Signal<Out, Bits<32>>,
    pub got_prod: Signal<Out, Bits<16>>,
    pub got_cons: Signal<Out, Bits<16>>,
    pub commit_valid: Signal<In, Bit>,
    pub commit_ready: Signal<Out, Bit>,
    pub commit_queue: Signal<In, Bits<Q>>,
    pub commit_index: Signal<In, Bits<16>>,
    pub db_valid: Signal<Out, Bit>,
    pub db_queue: Signal<Out, Bits<Q>>,
    /// Completion rings: clear SIZE.ARM of a queue (its interrupt fired), held off for the
    /// cycle the host writes a SIZE; `disarm_size` is the SIZE the engine looked up.
    pub disarm_valid: Signal<In, Bit>,
    pub disarm_ready: Signal<Out, Bit>,
    pub disarm_queue: Signal<In, Bits<Q>>,
    pub disarm_size: Signal<In, Bits<32>>,

    base_lo: RAM<Bits<32>, Q>,
    base_hi: RAM<Bits<32>, Q>,
    size: RAM<Bits<32>, Q>,
    prod: RAM<Bits<32>, Q>,
    cons: RAM<Bits<32>, Q>,
    /// Last cycle's read: the host's word, or an engine's lookup.
    rd_word_q: DFF<Bits<3>>,
    look_q: DFF<Bit>,
    look_queue_q: DFF<Bits<Q>>,

    host_prod: Signal<Local, Bit>,
    host_cons: Signal<Local, Bit>,
    take_look: Signal<Local, Bit>,
    commit_fire: Signal<Local, Bit>,

    /// Completion rings: the NIC owns the producer.
    k_nic_owns_prod: Constant<Bit>,
    k_mask_base_lo: Constant<Bits<32>>,
    k_mask_size: Constant<Bits<32>>,
    k_mask_index: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_not_arm: Constant<Bits<32>>,
}

impl<const Q: usize> QueueMgr<Q> {
    /// A manager of `2^Q` rings; `completion` for completion rings (the NIC produces).
    pub fn new(completion: bool) -> Self {
        let mask = |name: &str| {
            let r = rnic_regmap::regs::ring_register(name).expect("a ring register");
            bits::<32>(u64::from(r.mask()))
        };
        QueueMgr {
            clock: Default::default(),
            reset: Default::default(),
            wr_en: Default::default(),
            wr_queue: Default::default(),
            wr_word: Default::default(),
            wr_data: Default::default(),
            rd_start: Default::default(),
            rd_queue: Default::default(),
            rd_word: Default::default(),
            rd_data: Default::default(),
            look_valid: Default::default(),
            look_ready: Default::default(),
            look_queue: Default::default(),
            got_valid: Default::default(),
            got_queue: Default::default(),
            got_base: Default::default(),
            got_size: Default::default(),
            got_prod: Default::default(),
            got_cons: Default::default(),
            commit_valid: Default::default(),
            commit_ready: Default::default(),
            commit_queue: Default::default(),
            commit_index: Default::default(),
            db_valid: Default::default(),
            db_queue: Default::default(),
            disarm_valid: Default::default(),
            disarm_ready: Default::default(),
            disarm_queue: Default::default(),
            disarm_size: Default::default(),
            base_lo: Default::default(),
            base_hi: Default::default(),
            size: Default::default(),
            prod: Default::default(),
            cons: Default::default(),
            rd_word_q: Default::default(),
            look_q: Default::default(),
            look_queue_q: Default::default(),
            host_prod: Default::default(),
            host_cons: Default::default(),
            take_look: Default::default(),
            commit_fire: Default::default(),
            k_nic_owns_prod: Constant::new(completion),
            k_mask_base_lo: Constant::new(mask("BASE_LO")),
            k_mask_size: Constant::new(mask("SIZE")),
            k_mask_index: Constant::new(mask("PROD")),
            k_zero32: Constant::new(bits::<32>(0)),
            k_not_arm: Constant::new(
                mask("SIZE")
                    & bits::<32>(u64::from(
                        !rnic_regmap::regs::ring_register("SIZE")
                            .and_then(|r| r.fields.iter().find(|f| f.name == "ARM"))
                            .expect("SIZE.ARM")
                            .mask(),
                    )),
            ),
        }
    }
}

impl<const Q: usize> Logic for QueueMgr<Q> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rd_word_q, look_q, look_queue_q);
        self.base_lo.read_clock.next = self.clock.val();
        self.base_lo.write_clock.next = self.clock.val();
        self.base_hi.read_clock.next = self.clock.val();
        self.base_hi.write_clock.next = self.clock.val();
        self.size.read_clock.next = self.clock.val();
        self.size.write_clock.next = self.clock.val();
        self.prod.read_clock.next = self.clock.val();
        self.prod.write_clock.next = self.clock.val();
        self.cons.read_clock.next = self.clock.val();
        self.cons.write_clock.next = self.clock.val();

        // ---- Reads: the host first, then an engine's lookup.
        self.look_ready.next = !self.rd_start.val();
        self.take_look.next = self.look_valid.val() & !self.rd_start.val();
        self.base_lo.read_address.next = self.look_queue.val();
        self.base_hi.read_address.next = self.look_queue.val();
        self.size.read_address.next = self.look_queue.val();
        self.prod.read_address.next = self.look_queue.val();
        self.cons.read_address.next = self.look_queue.val();
        if self.rd_start.val() {
            self.base_lo.read_address.next = self.rd_queue.val();
            self.base_hi.read_address.next = self.rd_queue.val();
            self.size.read_address.next = self.rd_queue.val();
            self.prod.read_address.next = self.rd_queue.val();
            self.cons.read_address.next = self.rd_queue.val();
            self.rd_word_q.d.next = self.rd_word.val();
        }
        self.look_q.d.next = self.take_look.val();
        if self.take_look.val() {
            self.look_queue_q.d.next = self.look_queue.val();
        }
        self.rd_data.next = self.k_zero32.val();
        if self.rd_word_q.q.val() == 0 {
            self.rd_data.next = self.base_lo.read_data.val();
        }
        if self.rd_word_q.q.val() == 1 {
            self.rd_data.next = self.base_hi.read_data.val();
        }
        if self.rd_word_q.q.val() == 2 {
            self.rd_data.next = self.size.read_data.val();
        }
        if self.rd_word_q.q.val() == 3 {
            self.rd_data.next = self.prod.read_data.val();
        }
        if self.rd_word_q.q.val() == 4 {
            self.rd_data.next = self.cons.read_data.val();
        }
        self.got_valid.next = self.look_q.q.val();
        self.got_queue.next = self.look_queue_q.q.val();
        self.got_base.next = bit_cast::<64, 32>(self.base_lo.read_data.val())
            | (bit_cast::<64, 32>(self.base_hi.read_data.val()) << 32);
        self.got_size.next = self.size.read_data.val();
        self.got_prod.next = self.prod.read_data.val().get_bits::<16>(0);
        self.got_cons.next = self.cons.read_data.val().get_bits::<16>(0);

        // ---- Host writes.
        self.base_lo.write_address.next = self.wr_queue.val();
        self.base_hi.write_address.next = self.wr_queue.val();
        self.size.write_address.next = self.wr_queue.val();
        self.base_lo.write_data.next = self.wr_data.val() & self.k_mask_base_lo.val();
        self.base_hi.write_data.next = self.wr_data.val();
        self.size.write_data.next = self.wr_data.val() & self.k_mask_size.val();
        self.base_lo.write_enable.next = self.wr_en.val() & (self.wr_word.val() == 0);
        self.base_hi.write_enable.next = self.wr_en.val() & (self.wr_word.val() == 1);
        self.size.write_enable.next = self.wr_en.val() & (self.wr_word.val() == 2);
        self.disarm_ready.next = !(self.wr_en.val() & (self.wr_word.val() == 2));
        if self.disarm_valid.val() & self.disarm_ready.val() {
            self.size.write_address.next = self.disarm_queue.val();
            self.size.write_data.next = self.disarm_size.val() & self.k_not_arm.val();
            self.size.write_enable.next = true;
        }
        // The doorbell writes the index the host owns.
        self.host_prod.next = self.wr_en.val()
            & ((self.wr_word.val() == 3)
                | ((self.wr_word.val() == 5) & !self.k_nic_owns_prod.val()));
        self.host_cons.next = self.wr_en.val()
            & ((self.wr_word.val() == 4)
                | ((self.wr_word.val() == 5) & self.k_nic_owns_prod.val()));
        self.db_valid.next = self.wr_en.val() & (self.wr_word.val() == 5);
        self.db_queue.next = self.wr_queue.val();

        // ---- Engine commits: the NIC-owned index, unless the host writes it this cycle.
        self.commit_ready.next = !self.host_cons.val();
        if self.k_nic_owns_prod.val() {
            self.commit_ready.next = !self.host_prod.val();
        }
        self.commit_fire.next = self.commit_valid.val() & self.commit_ready.val();
        self.prod.write_address.next = self.wr_queue.val();
        self.prod.write_data.next = self.wr_data.val() & self.k_mask_index.val();
        self.prod.write_enable.next = self.host_prod.val();
        self.cons.write_address.next = self.wr_queue.val();
        self.cons.write_data.next = self.wr_data.val() & self.k_mask_index.val();
        self.cons.write_enable.next = self.host_cons.val();
        if self.commit_fire.val() & self.k_nic_owns_prod.val() {
            self.prod.write_address.next = self.commit_queue.val();
            self.prod.write_data.next = bit_cast::<32, 16>(self.commit_index.val());
            self.prod.write_enable.next = true;
        }
        if self.commit_fire.val() & !self.k_nic_owns_prod.val() {
            self.cons.write_address.next = self.commit_queue.val();
            self.cons.write_data.next = bit_cast::<32, 16>(self.commit_index.val());
            self.cons.write_enable.next = true;
        }

        if self.reset.val() {
            self.look_q.d.next = false;
        }
    }
}
