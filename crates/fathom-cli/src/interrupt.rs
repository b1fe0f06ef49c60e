//! Ctrl-C: the first asks the current step to finish its records (every finished step stays
//! readable), a second exits at once.

use fathom_core::interrupt;

pub fn install_handler() {
    let _ = ctrlc::set_handler(|| {
        if interrupt::requested() {
            eprintln!("\nfathom: second interrupt, exiting now");
            std::process::exit(130);
        }
        eprintln!("\nfathom: interrupted; finishing the current step's records (Ctrl-C again to quit now)");
        interrupt::request();
    });
}
