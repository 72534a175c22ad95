//! The host interface's tops as the benches drive them: their port lists for [`PortDut`]
//! ([`crate::ports`]).

use crate::hdl_ports;
#[allow(unused_imports)]
use crate::ports::PortDut;

hdl_ports!(rnic_hw::axil_slave::AxilSlave {
    inputs: [
        reset,
        s_axil_awaddr,
        s_axil_awvalid,
        s_axil_wdata,
        s_axil_wstrb,
        s_axil_wvalid,
        s_axil_bready,
        s_axil_araddr,
        s_axil_arvalid,
        s_axil_rready,
        reg_wr_hit,
        reg_rd_data,
        reg_rd_hit,
    ],
    outputs: [
        s_axil_awready,
        s_axil_wready,
        s_axil_bresp,
        s_axil_bvalid,
        s_axil_arready,
        s_axil_rdata,
        s_axil_rresp,
        s_axil_rvalid,
        reg_wr_en,
        reg_wr_addr,
        reg_wr_data,
        reg_rd_addr,
    ],
});

hdl_ports!(rnic_hw::host_nic::HostNic {
    inputs: [
        reset,
        link_up,
        s_axil_awaddr,
        s_axil_awvalid,
        s_axil_wdata,
        s_axil_wstrb,
        s_axil_wvalid,
        s_axil_bready,
        s_axil_araddr,
        s_axil_arvalid,
        s_axil_rready,
        s_axis_tdata,
        s_axis_tkeep,
        s_axis_tlast,
        s_axis_tvalid,
        s_axis_tuser,
        m_bypass_tready,
    ],
    outputs: [
        s_axil_awready,
        s_axil_wready,
        s_axil_bresp,
        s_axil_bvalid,
        s_axil_arready,
        s_axil_rdata,
        s_axil_rresp,
        s_axil_rvalid,
        s_axis_tready,
        m_bypass_tdata,
        m_bypass_tkeep,
        m_bypass_tlast,
        m_bypass_tvalid,
        m_bypass_tuser,
        irq,
    ],
});
