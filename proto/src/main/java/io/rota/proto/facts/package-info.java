/**
 * One parser per protocol fact (issue 30): the values every door and apply must agree on — a member's
 * address ({@link io.rota.proto.facts.HostPort}) and name ({@link io.rota.proto.facts.MemberName}). A refusal
 * is a {@link io.rota.proto.facts.BadValueException} whose message names the field.
 */
package io.rota.proto.facts;
