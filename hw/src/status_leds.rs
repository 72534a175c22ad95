//! The board's status LEDs (active low), driven in the core clock domain from event pulses.
//!
//! With 12 LEDs (four RGB LEDs, pins r, g, b each): LED0 green link, LED1 green receive, LED2
//! green transmit, LED3 red a bad frame in the last ~1.3 s, LED3 green bit 0 of the count of
//! frames the MAC dropped (FCS), LED3 blue bit 0 of the count of frames the core found bad
//! (ICRC). With one LED: on while the link is up, flickering with traffic, blinking slowly
//! for ~1.3 s after a bad frame. Activity stretches to 2^23 clocks (84 ms at 100 MHz).

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct StatusLeds<const L: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Link up (a level, already in this domain).
    pub link: Signal<In, Bit>,
    pub rx_frame: Signal<In, Bit>,
    pub tx_frame: Signal<In, Bit>,
    /// A frame dropped by the MAC (bad FCS or no room).
    pub fcs_bad: Signal<In, Bit>,
    /// A frame the core found bad.
    pub core_bad: Signal<In, Bit>,
    pub led_n: Signal<Out, Bits<L>>,
    /// Frames the MAC dropped.
    pub fcs_bad_count: Signal<Out, Bits<16>>,
    /// Frames the core found bad.
    pub core_bad_count: Signal<Out, Bits<16>>,
    rx_st: DFF<Bits<23>>,
    tx_st: DFF<Bits<23>>,
    err_st: DFF<Bits<27>>,
    blink: DFF<Bits<26>>,
    fcs_cnt: DFF<Bits<16>>,
    core_cnt: DFF<Bits<16>>,
    status: Signal<Local, Bits<12>>,
    single_led: Constant<Bit>,
    k_max23: Constant<Bits<23>>,
    k_one23: Constant<Bits<23>>,
    k_max27: Constant<Bits<27>>,
    k_one27: Constant<Bits<27>>,
    k_one26: Constant<Bits<26>>,
    k_one16: Constant<Bits<16>>,
    k_zero12: Constant<Bits<12>>,
    k_zero16: Constant<Bits<16>>,
    k_zero23: Constant<Bits<23>>,
    k_zero27: Constant<Bits<27>>,
}

impl<const L: usize> Default for StatusLeds<L> {
    fn default() -> Self {
        assert!(L == 1 || L == 12, "StatusLeds drives 1 or 12 LEDs");
        StatusLeds {
            clock: Default::default(),
            reset: Default::default(),
            link: Default::default(),
            rx_frame: Default::default(),
            tx_frame: Default::default(),
            fcs_bad: Default::default(),
            core_bad: Default::default(),
            led_n: Default::default(),
            fcs_bad_count: Default::default(),
            core_bad_count: Default::default(),
            rx_st: Default::default(),
            tx_st: Default::default(),
            err_st: Default::default(),
            blink: Default::default(),
            fcs_cnt: Default::default(),
            core_cnt: Default::default(),
            status: Default::default(),
            single_led: Constant::new(L == 1),
            k_max23: Constant::new(bits::<23>((1 << 23) - 1)),
            k_one23: Constant::new(bits::<23>(1)),
            k_max27: Constant::new(bits::<27>((1 << 27) - 1)),
            k_one27: Constant::new(bits::<27>(1)),
            k_one26: Constant::new(bits::<26>(1)),
            k_one16: Constant::new(bits::<16>(1)),
            k_zero12: Constant::new(bits::<12>(0)),
            k_zero16: Constant::new(bits::<16>(0)),
            k_zero23: Constant::new(bits::<23>(0)),
            k_zero27: Constant::new(bits::<27>(0)),
        }
    }
}

impl<const L: usize> Logic for StatusLeds<L> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rx_st, tx_st, err_st, blink, fcs_cnt, core_cnt);
        self.blink.d.next = self.blink.q.val() + self.k_one26.val();
        if self.rx_st.q.val().any() {
            self.rx_st.d.next = self.rx_st.q.val() - self.k_one23.val();
        }
        if self.rx_frame.val() {
            self.rx_st.d.next = self.k_max23.val();
        }
        if self.tx_st.q.val().any() {
            self.tx_st.d.next = self.tx_st.q.val() - self.k_one23.val();
        }
        if self.tx_frame.val() {
            self.tx_st.d.next = self.k_max23.val();
        }
        if self.err_st.q.val().any() {
            self.err_st.d.next = self.err_st.q.val() - self.k_one27.val();
        }
        if self.fcs_bad.val() | self.core_bad.val() {
            self.err_st.d.next = self.k_max27.val();
        }
        if self.fcs_bad.val() {
            self.fcs_cnt.d.next = self.fcs_cnt.q.val() + self.k_one16.val();
        }
        if self.core_bad.val() {
            self.core_cnt.d.next = self.core_cnt.q.val() + self.k_one16.val();
        }

        self.status.next = self.k_zero12.val();
        self.status.next = self.status.val().replace_bit(1, self.link.val());
        self.status.next = self.status.val().replace_bit(4, self.rx_st.q.val().any());
        self.status.next = self.status.val().replace_bit(7, self.tx_st.q.val().any());
        self.status.next = self.status.val().replace_bit(9, self.err_st.q.val().any());
        self.status.next = self
            .status
            .val()
            .replace_bit(10, self.fcs_cnt.q.val().get_bit(0));
        self.status.next = self
            .status
            .val()
            .replace_bit(11, self.core_cnt.q.val().get_bit(0));
        if self.single_led.val() {
            // Bit 0 is the only LED.
            self.status.next = self.status.val().replace_bit(
                0,
                self.link.val()
                    & !((self.rx_st.q.val().any() | self.tx_st.q.val().any())
                        & self.blink.q.val().get_bit(21)),
            );
            if self.err_st.q.val().any() {
                self.status.next = self
                    .status
                    .val()
                    .replace_bit(0, self.blink.q.val().get_bit(24));
            }
        }

        if self.reset.val() {
            self.rx_st.d.next = self.k_zero23.val();
            self.tx_st.d.next = self.k_zero23.val();
            self.err_st.d.next = self.k_zero27.val();
            self.fcs_cnt.d.next = self.k_zero16.val();
            self.core_cnt.d.next = self.k_zero16.val();
        }
        self.led_n.next = !bit_cast::<L, 12>(self.status.val());
        self.fcs_bad_count.next = self.fcs_cnt.q.val();
        self.core_bad_count.next = self.core_cnt.q.val();
    }
}
