//! `generate`: renders the package into a folder, or checks that it is fresh.

use super::args::GenerateArgs;
use crate::error::Error;
use crate::{folder, render};
use slotted_counters_core::options::flags;

pub(super) fn run(args: &GenerateArgs) -> Result<(), Error> {
    let options = args.package.build()?;
    let files = render::render(&options)?;
    if args.check {
        if let Some(diff) = folder::diff(&args.out, &files)? {
            print!("{diff}");
            let mut rerun = vec!["--out".to_owned(), args.out.display().to_string()];
            rerun.extend(flags(&options));
            return Err(Error::Stale { dir: args.out.clone(), args: rerun });
        }
        eprintln!("{} is up to date", args.out.display());
    } else {
        folder::write(&args.out, &files)?;
        eprintln!("wrote {} files to {}", files.len(), args.out.display());
    }
    Ok(())
}
