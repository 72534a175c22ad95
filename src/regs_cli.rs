//! `rnic regs`: the register map, defined once in `hw/regmap`, as documents.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use rnic_regmap::render;

#[derive(Args)]
pub struct RegsArgs {
    #[command(subcommand)]
    cmd: RegsCmd,
}

#[derive(Subcommand)]
enum RegsCmd {
    /// The register map and descriptor formats as Markdown, JSON or a C header.
    Doc {
        #[arg(long, value_enum, default_value = "md")]
        format: DocFormat,
        /// Write to this file instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Every register by name with its value: of the simulated device (Verilator), or of a
    /// VFIO device.
    Dump {
        /// PCI address of a device bound to vfio-pci (e.g. 0000:00:04.0).
        #[arg(long, value_name = "BDF")]
        vfio: Option<String>,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum DocFormat {
    Md,
    Json,
    C,
}

pub fn run(a: &RegsArgs) -> Result<ExitCode> {
    match &a.cmd {
        RegsCmd::Doc { format, out } => {
            let text = match format {
                DocFormat::Md => render::markdown(),
                DocFormat::Json => serde_json::to_string_pretty(&render::json())? + "\n",
                DocFormat::C => render::c_header(),
            };
            match out {
                Some(p) => {
                    std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?
                }
                None => print!("{text}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        RegsCmd::Dump { vfio } => crate::raw_cli::run_dump(vfio.as_deref()),
    }
}
