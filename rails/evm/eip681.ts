/**
 * EIP-681 payment requests for ERC-20 token transfers, the form mobile wallets (MetaMask, Trust,
 * Rainbow, Coinbase Wallet) read from a QR code:
 *
 *   ethereum:<token contract>@<chain id>/transfer?address=<recipient>&uint256=<amount>
 *
 * The amount is an integer of the token's smallest unit (USDT has 18 decimals on BSC, 6 on
 * Ethereum and Polygon), written out in full: never a float, never an exponent.
 */
const evmAddress = /^0x[0-9a-fA-F]{40}$/;

export class PaymentUriError extends Error {}

export interface TokenTransferRequest {
  /** The token's contract address. */
  token: string;
  /** EIP-155 chain id of the network the transfer must be made on. */
  chainId: number;
  /** Who receives the tokens. */
  to: string;
  /** Amount in the token's smallest unit. */
  amountMinor: bigint;
}

export function eip681TokenTransfer(r: TokenTransferRequest): string {
  if (!evmAddress.test(r.token)) throw new PaymentUriError(`not a token contract address: ${r.token}`);
  if (!evmAddress.test(r.to)) throw new PaymentUriError(`not a recipient address: ${r.to}`);
  if (!Number.isSafeInteger(r.chainId) || r.chainId <= 0) throw new PaymentUriError(`not a chain id: ${r.chainId}`);
  if (r.amountMinor <= 0n) throw new PaymentUriError('the amount must be greater than 0');
  return `ethereum:${r.token}@${r.chainId}/transfer?address=${r.to}&uint256=${r.amountMinor.toString()}`;
}
