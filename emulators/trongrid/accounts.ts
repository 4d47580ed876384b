/**
 * Accounts as java-tron's HTTP API shows them (tronprotocol/documentation-en, api/http/account
 * and stake-v2): an account exists once TRX reached it (a TRC-20 receipt creates none); it holds
 * TRX (sun), may stake TRX for energy (Stake 2.0 `frozenV2`) and delegate it, and has 600 free
 * bandwidth a day. Answers leave zero fields out, as the node's proto3 JSON does.
 */
export const freeNetLimit = 600;

/** Mainnet-like network totals: energy per staked TRX is TotalEnergyLimit / TotalEnergyWeight (about 9.5). */
export const networkTotals = { TotalEnergyLimit: 180_000_000_000, TotalEnergyWeight: 19_000_000_000, TotalNetLimit: 43_200_000_000, TotalNetWeight: 26_000_000_000 };

/** Chain parameters as `/wallet/getchainparameters` lists them (sun). */
export const chainFees = { getEnergyFee: 100, getTransactionFee: 1_000, getCreateAccountFee: 100_000, getCreateNewAccountFeeInSystemContract: 1_000_000 };

const drop0 = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== 0 && v !== undefined));

export class TronAccounts {
  private trx = new Map<string, bigint>();
  private created = new Set<string>();
  /** Staked sun for energy (Stake 2.0), and what of it is delegated, per owner; energy delegated in, per receiver (sun). */
  private stakedEnergy = new Map<string, bigint>();
  private delegatedOut = new Map<string, bigint>();
  private delegatedIn = new Map<string, bigint>();
  private freeNetUsed = new Map<string, number>();
  private energyUsed = new Map<string, bigint>();
  private burnedSun = new Map<string, bigint>();

  exists = (a: string) => this.created.has(a);
  trxOf = (a: string) => this.trx.get(a) ?? 0n;

  setTrx(a: string, sun: bigint): void {
    this.trx.set(a, sun);
    this.created.add(a);
  }

  stakeForEnergy(a: string, sun: bigint): void {
    this.created.add(a);
    this.stakedEnergy.set(a, sun);
  }

  canDelegateSun = (a: string) => (this.stakedEnergy.get(a) ?? 0n) - (this.delegatedOut.get(a) ?? 0n);
  delegatedInSun = (a: string) => this.delegatedIn.get(a) ?? 0n;
  freeBandwidth = (a: string) => freeNetLimit - (this.freeNetUsed.get(a) ?? 0);
  useFreeBandwidth = (a: string, n: number) => this.freeNetUsed.set(a, (this.freeNetUsed.get(a) ?? 0) + n);

  /** Energy of its delegations an account has used today. */
  energyUsedBy = (a: string) => this.energyUsed.get(a) ?? 0n;
  useEnergy = (a: string, n: bigint) => this.energyUsed.set(a, this.energyUsedBy(a) + n);
  /** TRX an account burned in fees (bandwidth, energy, new accounts), in sun. */
  burnedBy = (a: string) => this.burnedSun.get(a) ?? 0n;

  /** Takes `sun` of an account's TRX as a fee (burned). */
  burn(a: string, sun: bigint): void {
    if (sun === 0n) return;
    this.trx.set(a, this.trxOf(a) - sun);
    this.burnedSun.set(a, this.burnedBy(a) + sun);
  }

  /** Moves TRX; the recipient's account is created if it had none. */
  sendTrx(from: string, to: string, sun: bigint): void {
    this.trx.set(from, this.trxOf(from) - sun);
    this.trx.set(to, this.trxOf(to) + sun);
    this.created.add(to);
  }

  /** Energy a receiver holds now from delegations: its delegated stake at the network's ratio. */
  energyLimit(a: string): bigint {
    return (this.delegatedInSun(a) / 1_000_000n) * BigInt(networkTotals.TotalEnergyLimit) / BigInt(networkTotals.TotalEnergyWeight);
  }

  /** `/wallet/getaccount`: `{}` for an address with no account. */
  accountJson(a: string, show: (a: string) => string): Record<string, unknown> {
    if (!this.exists(a)) return {};
    const frozen = this.stakedEnergy.get(a) ?? 0n;
    return drop0({
      address: show(a), balance: Number(this.trxOf(a)), create_time: 1_700_000_000_000,
      frozenV2: frozen > 0n ? [{}, { type: 'ENERGY', amount: Number(frozen) }] : undefined,
      delegated_frozenV2_balance_for_energy: Number(this.delegatedOut.get(a) ?? 0n),
    });
  }

  /** `/wallet/getaccountresource`. */
  resourceJson(a: string): Record<string, unknown> {
    return drop0({
      freeNetUsed: this.freeNetUsed.get(a) ?? 0, freeNetLimit, EnergyUsed: Number(this.energyUsedBy(a)), EnergyLimit: Number(this.energyLimit(a)), ...networkTotals,
    });
  }

  /** Why java-tron's validation refuses this delegation now, or null. */
  delegateRefusal(owner: string, receiver: string, sun: bigint): string | null {
    if (owner === receiver) return 'receiverAddress must not be the same as ownerAddress';
    if (!this.exists(receiver)) return 'Account does not exist';
    if (sun < 1_000_000n) return 'delegateBalance must be greater than or equal to 1 TRX';
    if (this.canDelegateSun(owner) < sun) return 'delegateBalance must be less than or equal to available FreezeEnergyV2 balance';
    return null;
  }

  undelegateRefusal(owner: string, receiver: string, sun: bigint): string | null {
    if (this.delegatedInSun(receiver) < sun || (this.delegatedOut.get(owner) ?? 0n) < sun) return 'insufficient delegatedFrozenBalance(Energy)';
    return null;
  }

  delegate(owner: string, receiver: string, sun: bigint): string | null {
    const refusal = this.delegateRefusal(owner, receiver, sun);
    if (refusal) return refusal;
    this.delegatedOut.set(owner, (this.delegatedOut.get(owner) ?? 0n) + sun);
    this.delegatedIn.set(receiver, this.delegatedInSun(receiver) + sun);
    return null;
  }

  undelegate(owner: string, receiver: string, sun: bigint): string | null {
    const refusal = this.undelegateRefusal(owner, receiver, sun);
    if (refusal) return refusal;
    this.delegatedOut.set(owner, (this.delegatedOut.get(owner) ?? 0n) - sun);
    this.delegatedIn.set(receiver, this.delegatedInSun(receiver) - sun);
    return null;
  }
}
