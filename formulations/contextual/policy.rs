//! REINFORCE for the policy of a contextual tree (the thesis' Algorithm 4), on libtorch
//! through `tch` (cargo feature `torch`), on the CPU.
//!
//! The network of [`PolicyNetwork`] (its weights live in a `tch` `VarStore` while training
//! and are copied back to plain arrays) is trained on the standardized training rows in
//! seeded batches: one sampled tree per row, the reward of that tree on that row from the
//! precomputed reward matrix, the loss of Algorithm 4, one Adam step. The learning rate
//! follows a cosine from its initial value to 0 over `max_epochs` and is updated after each
//! epoch; the greedy policy is scored on the validation part after each epoch and the best
//! network is kept (early stopping with `patience`). Randomness comes from a ChaCha8
//! generator (see the module comment of `contextual`), so a seed gives the same network.
//!
//! Depends on the core, `contextual` and `tch`.

use super::{ContextualConfig, DenseLayer, PolicyNetwork};
use glassbox_core::{GlassboxError, Interrupt, Result};
use nalgebra::DMatrix;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tch::nn::OptimizerConfig;
use tch::{nn, Device, Kind, Tensor};

/// A trained policy and how training went.
#[derive(Clone, Debug)]
pub struct TrainedPolicy {
    /// The kept network.
    pub network: PolicyNetwork,
    /// Epochs run.
    pub epochs: usize,
    /// The epoch of the kept network (1-based).
    pub best_epoch: usize,
    /// Its validation score (higher is better).
    pub best_score: f64,
    /// Whether a stop request ended the training.
    pub interrupted: bool,
}

/// The network's parameters as tensors of a `VarStore`.
struct Parameters {
    store: nn::VarStore,
    /// (W, b) per layer; W is `outputs x inputs`.
    layers: Vec<(Tensor, Tensor)>,
}

impl Parameters {
    fn from_network(network: &PolicyNetwork) -> Self {
        let store = nn::VarStore::new(Device::Cpu);
        let root = store.root();
        let layers = network
            .layers
            .iter()
            .enumerate()
            .map(|(k, l)| {
                let w = Tensor::from_slice(&l.weights).view([l.outputs as i64, l.inputs as i64]);
                let b = Tensor::from_slice(&l.bias);
                (
                    root.var_copy(&format!("w{k}"), &w),
                    root.var_copy(&format!("b{k}"), &b),
                )
            })
            .collect();
        Parameters { store, layers }
    }

    /// The logits (N x B) of the standardized rows `z`; `dropout` is the mask (N x hidden,
    /// already divided by the keep rate) applied after the last hidden layer.
    fn logits(&self, z: &Tensor, dropout: Option<&Tensor>) -> Tensor {
        let last = self.layers.len() - 1;
        let mut h = z.shallow_clone();
        for (k, (w, b)) in self.layers.iter().enumerate() {
            h = h.matmul(&w.tr()) + b;
            if k < last {
                h = h.relu();
                if k + 1 == last {
                    if let Some(mask) = dropout {
                        h = h.multiply(mask); // out of place: autograd needs the ReLU output
                    }
                }
            }
        }
        h
    }

    /// The parameters copied back into `network`'s layers.
    fn write_to(&self, network: &mut PolicyNetwork) -> Result<()> {
        for (layer, (w, b)) in network.layers.iter_mut().zip(&self.layers) {
            *layer = DenseLayer {
                inputs: layer.inputs,
                outputs: layer.outputs,
                weights: to_vec(w)?,
                bias: to_vec(b)?,
            };
        }
        Ok(())
    }
}

fn to_vec(t: &Tensor) -> Result<Vec<f32>> {
    Vec::<f32>::try_from(t.detach().to_kind(Kind::Float).contiguous().view([-1]))
        .map_err(|e| GlassboxError::formulation(super::CCT, format!("libtorch: {e}")))
}

fn rows_tensor(z: &DMatrix<f64>, rows: &[usize]) -> Tensor {
    let p = z.ncols();
    let mut data = Vec::with_capacity(rows.len() * p);
    for &i in rows {
        data.extend(z.row(i).iter().map(|&v| v as f32));
    }
    Tensor::from_slice(&data).view([rows.len() as i64, p as i64])
}

/// Trains the policy on the rows of `x` with the reward matrix `rewards` (N x B);
/// `validation` scores the trees a greedy policy chooses for the validation rows (given
/// the network), higher is better.
pub fn train(
    config: &ContextualConfig,
    x: &DMatrix<f64>,
    rewards: &DMatrix<f32>,
    validation: &dyn Fn(&[usize]) -> f64,
    x_validation: &DMatrix<f64>,
) -> Result<TrainedPolicy> {
    tch::manual_seed(config.seed as i64);
    // The matrices are small (a batch times ~100 units): one intra-op thread is faster than
    // several, and much faster on a loaded machine (process-wide setting).
    tch::set_num_threads(1);
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    rng.set_stream(7);
    let actions = rewards.ncols();
    let mut network = PolicyNetwork::new(x, config.hidden, actions, &mut rng);
    let z = network.standardize(x);
    let params = Parameters::from_network(&network);
    let mut adam = nn::Adam::default()
        .build(&params.store, config.learning_rate)
        .map_err(|e| GlassboxError::formulation(super::CCT, format!("libtorch: {e}")))?;
    let n = x.nrows();
    let keep = 1.0 - config.dropout;
    let lambda = config.entropy_weight;
    let mut order: Vec<usize> = (0..n).collect();
    let mut best = (f64::NEG_INFINITY, 0usize, network.clone());
    let mut epochs = 0;
    let mut interrupted = false;
    for epoch in 1..=config.max_epochs {
        epochs = epoch;
        order.shuffle(&mut rng);
        for batch in order.chunks(config.batch_size) {
            let m = batch.len();
            let zb = rows_tensor(&z, batch);
            let mask: Vec<f32> = (0..m * config.hidden)
                .map(|_| {
                    if rng.random::<f64>() < keep {
                        (1.0 / keep) as f32
                    } else {
                        0.0
                    }
                })
                .collect();
            let mask = Tensor::from_slice(&mask).view([m as i64, config.hidden as i64]);
            let log_pi = params.logits(&zb, Some(&mask)).log_softmax(1, Kind::Float);
            // Line 3: a_i ~ pi(. | x_i), drawn on the CPU from the batch's probabilities.
            let pi = to_vec(&log_pi.exp())?;
            let chosen: Vec<i64> = (0..m)
                .map(|i| sample(&pi[i * actions..(i + 1) * actions], &mut rng) as i64)
                .collect();
            // Line 4: r(a_i).
            let r: Vec<f32> = batch
                .iter()
                .zip(&chosen)
                .map(|(&i, &a)| rewards[(i, a as usize)])
                .collect();
            let a = Tensor::from_slice(&chosen).view([m as i64, 1]);
            let log_pa = log_pi.gather(1, &a, false).squeeze_dim(1);
            // Line 7: H(a|x) = -pi(a|x) log pi(a|x).
            let entropy = -(log_pa.exp() * &log_pa);
            let loss = -(log_pa * Tensor::from_slice(&r) + entropy * lambda).mean(Kind::Float);
            adam.backward_step(&loss);
        }
        // Cosine decay of the learning rate, once per epoch.
        let progress = epoch as f64 / config.max_epochs as f64;
        adam.set_lr(config.learning_rate * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()));
        params.write_to(&mut network)?;
        let score = validation(&network.choose(x_validation));
        if score > best.0 {
            best = (score, epoch, network.clone());
        } else if epoch - best.1 >= config.patience {
            break;
        }
        if config.interrupt.as_ref().is_some_and(Interrupt::requested) {
            interrupted = true;
            break;
        }
    }
    let (best_score, best_epoch, network) = best;
    Ok(TrainedPolicy {
        network,
        epochs,
        best_epoch,
        best_score,
        interrupted,
    })
}

/// An index drawn with probabilities `p` (which sum to 1 up to rounding).
fn sample(p: &[f32], rng: &mut ChaCha8Rng) -> usize {
    let total: f64 = p.iter().map(|&v| v as f64).sum();
    let mut u = rng.random::<f64>() * total;
    for (k, &v) in p.iter().enumerate() {
        u -= v as f64;
        if u < 0.0 {
            return k;
        }
    }
    p.len() - 1
}
