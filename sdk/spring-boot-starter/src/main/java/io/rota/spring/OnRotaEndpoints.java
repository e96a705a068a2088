package io.rota.spring;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

import java.util.List;

/**
 * Matches when {@code rota.endpoints} is set, in either form application.yml allows: a comma-separated
 * string or a YAML list ({@code rota.endpoints[0]}, ...), which a plain property condition would not see.
 */
final class OnRotaEndpoints extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        List<String> endpoints = Binder.get(context.getEnvironment())
                .bind("rota.endpoints", Bindable.listOf(String.class)).orElse(List.of());
        return endpoints.isEmpty()
                ? ConditionOutcome.noMatch("rota.endpoints is not set")
                : ConditionOutcome.match("rota.endpoints " + endpoints);
    }
}
